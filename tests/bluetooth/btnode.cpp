// btnode: one MMPI node of a discovered world over the bluetooth transport,
// run inside a bt-vm guest (one per virtual controller) by tst_bluetooth_rig.
// Node 0 is the root: it discovers the others by inquiry + SDP and forms the
// world. Then point-to-point around a ring, a bcast and an allreduce, each
// checked, and an RFCOMM throughput measurement between ranks 0 and 1.
// Prints "event=..." lines; exit 0 only if every check passed.
#include <mmpi/comm/communicator.h>
#include <mmpi/world/world.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>

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

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("root"), QStringLiteral("Be the root that discovers the others.")});
    parser.addOption({QStringLiteral("size"), QStringLiteral("World size."), QStringLiteral("N"), QStringLiteral("3")});
    parser.addOption({QStringLiteral("bulk"), QStringLiteral("Bytes for the throughput test."), QStringLiteral("B"),
                      QStringLiteral("262144")});
    parser.process(app);
    const int size = parser.value(QStringLiteral("size")).toInt();
    const bool root = parser.isSet(QStringLiteral("root"));

    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transport = QStringLiteral("bluetooth");
    config.worldName = QStringLiteral("bt-rig");
    config.worldKey = QByteArrayLiteral("bt-rig-test-key-0123456789abcdef");
    config.size = size;
    config.rank = root ? 0 : NoRank;
    config.formationTimeout = std::chrono::seconds(60);
    config.discoveryTimeout = std::chrono::seconds(50);
    config.handshakeTimeout = std::chrono::seconds(15);
    config.transportOptions = {{QStringLiteral("peerCache"), QStringLiteral("none")},
                               {QStringLiteral("expectedPeers"), root ? size - 1 : 0}};

    World world;
    auto comm = Communicator::world(world);
    if (!comm)
        return fail(QStringLiteral("communicator"), comm.error());
    QElapsedTimer clock;
    clock.start();
    world.form(config);
    if (auto formed = world.waitForFormed(); !formed)
        return fail(QStringLiteral("form"), formed.error());
    const int rank = world.rank();
    const int n = world.size();
    say(QStringLiteral("event=formed rank=%1 size=%2 form_ms=%3").arg(rank).arg(n).arg(clock.elapsed()));
    if (n != size)
        return fail(QStringLiteral("size"), {ErrorCode::FormationTimeout, QStringLiteral("size %1").arg(n)});

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
