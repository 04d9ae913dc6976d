// btnode: one MMPI node of a discovered world over the bluetooth transport,
// run inside a bt-vm guest (one per virtual controller) by tst_bluetooth_rig.
// Node 0 is the root: it discovers the others by inquiry + SDP and forms the
// world. Then point-to-point around a ring, a bcast and an allreduce, each
// checked, and an RFCOMM throughput measurement between ranks 0 and 1.
// With --scenario range|shrink it then runs iterations of a checked ring
// exchange and allreduce under FaultTolerance while the controller of rank
// --victim (default: the highest) is powered off: "range" powers it on again
// after --off-ms (the world must resume, every sum right, nothing lost),
// "shrink" ends that node for good (the survivors must SHRINK and finish);
// "kill" ends the victim's app with its radio on (SHRINK); "rebuild" ends it
// too, and the survivors invite a spare (--spare: a node that advertises the
// world once it formed) into its rank over Bluetooth (REBUILD).
// Prints "event=..." lines; exit 0 only if every check passed.
#include <mmpi/comm/communicator.h>
#include <mmpi/ft/faulttolerance.h>
#include <mmpi/world/world.h>

#include <QBluetoothLocalDevice>
#include <QEventLoop>
#include <QTimer>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>

#include <cstdio>
#include <limits>

using namespace mmpi;

namespace {

void say(const QString &line)
{
    std::printf("%s\n", qPrintable(line));
    std::fflush(stdout);
}

int fail(const QString &what, const Error &error)
{
    say(QStringLiteral("event=failed step=%1 reason=%2").arg(what, error.toString()));
    return 1;
}

// Runs the event loop for `ms` (FaultTolerance's signals, D-Bus replies).
void pause(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

QString hostModeName(QBluetoothLocalDevice::HostMode mode)
{
    switch (mode) {
    case QBluetoothLocalDevice::HostPoweredOff:
        return QStringLiteral("off");
    case QBluetoothLocalDevice::HostConnectable:
        return QStringLiteral("connectable");
    default:
        return QStringLiteral("discoverable");
    }
}

// Powers this guest's controller off (through bluetoothd, as a user or the
// OS would) and waits until it is.
bool powerOff(QBluetoothLocalDevice &local)
{
    local.setHostMode(QBluetoothLocalDevice::HostPoweredOff);
    for (int i = 0; i < 50 && local.hostMode() != QBluetoothLocalDevice::HostPoweredOff; ++i)
        pause(100);
    say(QStringLiteral("event=power state=%1").arg(hostModeName(local.hostMode())));
    return local.hostMode() == QBluetoothLocalDevice::HostPoweredOff;
}

struct Scenario
{
    QString name;      // range, shrink (power off for good), kill (the app dies, the radio stays on) or rebuild
    bool spare = false; // this node takes the victim's rank (rebuild)
    int victim = 0;    // world rank whose controller goes off
    int offMs = 5000;  // range: how long
    int iterations = 20;
    int offAt = 5;     // iteration at which it goes off
};

// Iterations of a ring exchange and an allreduce, each checked, that go on
// through the power-off: messages wait for the reconnection (range), or the
// survivors agree, shrink and resume from the last iteration all finished.
int runScenario(World &world, const Communicator &comm, const Scenario &scenario)
{
    FaultTolerance ft(&world);
    if (auto ok = ft.protect(comm).wait(); !ok)
        return fail(QStringLiteral("protect"), ok.error());
    int reconfigured = 0, handled = 0, returned = 0;
    QObject::connect(&ft, &FaultTolerance::worldReconfigured, [&](Policy policy, const QList<int> &failed) {
        ++reconfigured;
        QStringList ranks;
        for (int r : failed)
            ranks << QString::number(r);
        say(QStringLiteral("event=reconfigured policy=%1 failed=%2 size=%3")
                .arg(QVariant::fromValue(policy).toString(), ranks.join(u','))
                .arg(ft.communicator().size()));
    });
    const bool victim = world.rank() == scenario.victim;
    QElapsedTimer sincePowerOn; // the victim's: until every peer is back
    QObject::connect(&world, &World::nodeReturned, [&](int rank) {
        ++returned;
        say(QStringLiteral("event=returned rank=%1").arg(rank));
        if (victim && sincePowerOn.isValid() && returned == world.size() - 1)
            say(QStringLiteral("event=reconnected ms=%1").arg(sincePowerOn.elapsed()));
    });
    QBluetoothLocalDevice local;
    int rebuilt = scenario.spare ? 1 : 0;
    QObject::connect(&ft, &FaultTolerance::ranksRebuilt, [&] {
        ++rebuilt;
        say(QStringLiteral("event=rebuilt size=%1").arg(ft.communicator().size()));
    });
    if (scenario.name == u"rebuild") {
        ft.setPolicy(World::FailureClass::NodeTerm, Policy::Rebuild);
        ft.setInvitesSpares(true);
    }
    QElapsedTimer clock;
    bool wentOff = false;
    // A spare joins the survivors' resume: the iteration they all finished.
    qint64 done = scenario.spare ? std::numeric_limits<qint64>::max() : 0;
    if (scenario.spare)
        handled = -1;
    for (qint64 i = 1; i <= scenario.iterations;) {
        if (handled != reconfigured) {
            handled = reconfigured;
            // REBUILD: the lost rank is blank until the spare takes it.
            for (int k = 0; k < 900 && scenario.name == u"rebuild" && rebuilt < reconfigured; ++k)
                pause(100);
            auto resume = ft.communicator().allreduce(done, Op::Min).wait();
            if (!resume)
                return fail(QStringLiteral("resume"), resume.error());
            i = *resume + 1;
            continue;
        }
        if (victim && !scenario.spare && i == scenario.offAt
            && (scenario.name == u"kill" || scenario.name == u"rebuild")) {
            say(QStringLiteral("event=done rank=%1 victim=1").arg(world.rank()));
            std::_Exit(0); // the app dies mid-run: its sockets close, no goodbye
        }
        if (victim && !scenario.spare && i == scenario.offAt && !wentOff) {
            wentOff = true; // once: a resume after a reconfiguration comes here again
            if (!powerOff(local))
                return fail(QStringLiteral("power off"), {ErrorCode::LinkError, QStringLiteral("still on")});
            if (scenario.name == u"shrink") {
                pause(1000);
                say(QStringLiteral("event=done rank=%1 victim=1").arg(world.rank()));
                std::_Exit(0); // a phone that died: no goodbye, no close
            }
            pause(scenario.offMs);
            local.setHostMode(QBluetoothLocalDevice::HostDiscoverable);
            sincePowerOn.start();
            for (int k = 0; k < 50 && local.hostMode() == QBluetoothLocalDevice::HostPoweredOff; ++k)
                pause(100);
            say(QStringLiteral("event=power state=%1").arg(hostModeName(local.hostMode())));
        }
        if (i == scenario.offAt)
            clock.start();
        const Communicator c = ft.communicator();
        const int n = c.size(), rank = c.rank();
        const qint64 mine = i * 1000 + rank;
        auto sent = c.send((rank + 1) % n, 20, mine).wait();
        auto got = sent ? c.recv<qint64>((rank + n - 1) % n, 20).wait() : Result<qint64>(sent.error());
        auto sum = got ? c.allreduce(qint64(rank + 1) * i, Op::Sum).wait() : got;
        if (!sum) {
            say(QStringLiteral("event=failed iteration=%1 reason=%2").arg(i).arg(sum.error().toString()));
            for (int k = 0; k < 300 && handled == reconfigured; ++k)
                pause(100);
            if (handled == reconfigured)
                return fail(QStringLiteral("reconfiguration"), sum.error());
            continue;
        }
        if (*got != i * 1000 + (rank + n - 1) % n || *sum != qint64(n) * (n + 1) / 2 * i)
            return fail(QStringLiteral("check"), {ErrorCode::TypeMismatch,
                                                   QStringLiteral("iteration %1: got %2, sum %3").arg(i).arg(*got).arg(*sum)});
        if (i == scenario.offAt)
            say(QStringLiteral("event=outage iteration=%1 ms=%2").arg(i).arg(clock.elapsed()));
        done = i++;
        pause(100);
    }
    const int size = ft.communicator().size();
    const bool whole = scenario.name == u"range" || scenario.name == u"rebuild";
    const int expected = whole ? world.size() : world.size() - 1;
    if (size != expected || (scenario.name == u"range" && (reconfigured != 0 || returned == 0)))
        return fail(QStringLiteral("scenario"),
                    {ErrorCode::NodeLost, QStringLiteral("%1: size %2 (expected %3), %4 reconfiguration(s), %5 return(s)")
                                              .arg(scenario.name).arg(size).arg(expected).arg(reconfigured).arg(returned)});
    say(QStringLiteral("event=scenario name=%1 ok=1 iterations=%2 size=%3 returned=%4")
            .arg(scenario.name).arg(done).arg(size).arg(returned));
    if (auto ok = ft.communicator().barrier().wait(); !ok)
        return fail(QStringLiteral("barrier"), ok.error());
    say(QStringLiteral("event=done rank=%1").arg(world.rank()));
    world.closeAndWait();
    return 0;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("root"), QStringLiteral("Be the root that discovers the others.")});
    parser.addOption({QStringLiteral("size"), QStringLiteral("World size."), QStringLiteral("N"), QStringLiteral("3")});
    parser.addOption({QStringLiteral("bulk"), QStringLiteral("Bytes for the throughput test."), QStringLiteral("B"),
                      QStringLiteral("32768")});
    parser.addOption({QStringLiteral("scenario"),
                      QStringLiteral("range or shrink: power a controller off; kill: end the victim's app."),
                      QStringLiteral("S")});
    parser.addOption({QStringLiteral("victim"), QStringLiteral("Rank powered off (default: the highest)."),
                      QStringLiteral("R"), QStringLiteral("-1")});
    parser.addOption({QStringLiteral("off-ms"), QStringLiteral("range: how long it is off."), QStringLiteral("MS"),
                      QStringLiteral("5000")});
    parser.addOption({QStringLiteral("spare"), QStringLiteral("rebuild: be the spare that takes the lost rank.")});
    parser.addOption({QStringLiteral("formed-mark"), QStringLiteral("A file to create once the world formed."),
                      QStringLiteral("PATH")});
    parser.process(app);
    Scenario scenario;
    scenario.name = parser.value(QStringLiteral("scenario"));
    const QStringList scenarios{QStringLiteral("range"), QStringLiteral("shrink"), QStringLiteral("kill"),
                                QStringLiteral("rebuild")};
    if (!scenario.name.isEmpty() && !scenarios.contains(scenario.name))
        return fail(QStringLiteral("arguments"),
                    {ErrorCode::BadConfiguration, QStringLiteral("--scenario %1").arg(scenarios.join(u'|'))});
    scenario.spare = parser.isSet(QStringLiteral("spare"));
    scenario.offMs = parser.value(QStringLiteral("off-ms")).toInt();
    const int size = parser.value(QStringLiteral("size")).toInt();
    const bool root = parser.isSet(QStringLiteral("root"));

    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transport = QStringLiteral("bluetooth");
    config.worldName = QStringLiteral("bt-rig");
    config.worldKey = QByteArrayLiteral("bt-rig-test-key-0123456789abcdef");
    config.size = size;
    config.rank = root ? 0 : NoRank;
    // A spare waits through the formation, the loss and the survivors' agreement.
    config.formationTimeout = std::chrono::seconds(scenario.spare ? 90 : 60);
    config.discoveryTimeout = std::chrono::seconds(50);
    config.handshakeTimeout = std::chrono::seconds(15);
    // An outage of --off-ms fits in it; a node gone for good is given up
    // sooner than the default 30 s.
    config.reconnectGracePeriod = std::chrono::seconds(15);
    config.transportOptions = {{QStringLiteral("peerCache"), QStringLiteral("none")},
                               {QStringLiteral("expectedPeers"), root ? size - 1 : 0}};

    World world;
    auto comm = Communicator::world(world);
    if (!comm)
        return fail(QStringLiteral("communicator"), comm.error());
    QElapsedTimer clock;
    clock.start();
    // Wall-clock times: the guests share the host's clock, so the rig script
    // can tell when the last node of the mesh was ready.
    say(QStringLiteral("event=start epoch_ms=%1").arg(QDateTime::currentMSecsSinceEpoch()));
    world.form(config);
    if (auto formed = world.waitForFormed(); !formed)
        return fail(QStringLiteral("form"), formed.error());
    const int rank = world.rank();
    const int n = world.size();
    say(QStringLiteral("event=formed rank=%1 size=%2 form_ms=%3 epoch_ms=%4 replacement=%5")
            .arg(rank).arg(n).arg(clock.elapsed()).arg(QDateTime::currentMSecsSinceEpoch()).arg(world.isReplacement()));
    if (n != size)
        return fail(QStringLiteral("size"), {ErrorCode::FormationTimeout, QStringLiteral("size %1").arg(n)});
    if (const QString mark = parser.value(QStringLiteral("formed-mark")); !mark.isEmpty())
        QFile(mark).open(QIODevice::WriteOnly);
    if (scenario.spare) {
        if (!world.isReplacement())
            return fail(QStringLiteral("spare"), {ErrorCode::InvalidRank, QStringLiteral("not a replacement")});
        scenario.victim = rank;
        return runScenario(world, *comm, scenario);
    }

    // Point to point around the ring.
    const qint64 mine = 1000 + rank;
    if (auto sent = comm->send((rank + 1) % n, 7, mine).wait(); !sent)
        return fail(QStringLiteral("send"), sent.error());
    auto got = comm->recv<qint64>((rank + n - 1) % n, 7).wait();
    if (!got)
        return fail(QStringLiteral("recv"), got.error());
    if (*got != 1000 + (rank + n - 1) % n)
        return fail(QStringLiteral("recv"), {ErrorCode::TypeMismatch, QStringLiteral("got %1").arg(*got)});
    say(QStringLiteral("event=p2p ok=1 got=%1").arg(*got));

    auto value = comm->bcast(qint64(rank == 0 ? 424242 : -1), 0).wait();
    if (!value || *value != 424242)
        return fail(QStringLiteral("bcast"), value ? Error(ErrorCode::TypeMismatch, QString::number(*value))
                                                    : value.error());
    say(QStringLiteral("event=bcast ok=1 value=%1").arg(*value));

    auto sum = comm->allreduce(qint64(rank + 1), Op::Sum).wait();
    if (!sum || *sum != qint64(n) * (n + 1) / 2)
        return fail(QStringLiteral("allreduce"), sum ? Error(ErrorCode::TypeMismatch, QString::number(*sum))
                                                     : sum.error());
    say(QStringLiteral("event=allreduce ok=1 sum=%1").arg(*sum));

    if (!scenario.name.isEmpty()) {
        const int victim = parser.value(QStringLiteral("victim")).toInt();
        scenario.victim = victim < 0 ? n - 1 : victim;
        return runScenario(world, *comm, scenario);
    }

    const qint64 bulk = parser.value(QStringLiteral("bulk")).toLongLong();
    if (rank <= 1 && n > 1) {
        QElapsedTimer t;
        t.start();
        if (rank == 0) {
            QByteArray data(bulk, 'x');
            for (qint64 i = 0; i < bulk; ++i)
                data[i] = char(i * 31);
            if (auto sent = comm->send(1, 9, data).wait(); !sent)
                return fail(QStringLiteral("bulk send"), sent.error());
            auto ack = comm->recv<qint64>(1, 10).wait();
            if (!ack || *ack != bulk)
                return fail(QStringLiteral("bulk ack"), ack ? Error() : ack.error());
            say(QStringLiteral("event=throughput bytes=%1 ms=%2 kib_per_s=%3")
                    .arg(bulk).arg(t.elapsed()).arg(bulk * 1000.0 / 1024 / std::max<qint64>(1, t.elapsed()), 0, 'f', 1));
        } else {
            auto data = comm->recv<QByteArray>(0, 9).wait();
            bool good = data && data->size() == bulk;
            for (qint64 i = 0; good && i < bulk; ++i)
                good = (*data)[i] == char(i * 31);
            if (!good)
                return fail(QStringLiteral("bulk recv"), data ? Error(ErrorCode::TypeMismatch, QStringLiteral("content"))
                                                               : data.error());
            if (auto sent = comm->send(0, 10, qint64(data->size())).wait(); !sent)
                return fail(QStringLiteral("bulk ack"), sent.error());
        }
    }
    if (auto ok = comm->barrier().wait(); !ok)
        return fail(QStringLiteral("barrier"), ok.error());
    say(QStringLiteral("event=done rank=%1").arg(rank));
    world.closeAndWait();
    return 0;
}
