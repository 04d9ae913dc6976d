// discoverynode: one node of a discovered tcp world, for the tests that run
// it inside network namespaces (tst_discovery_netns, tst_dnssd_netns,
// tst_capture_netns), and for bench/dnssd.sh. It
// prints what the test checks, one line each, flushed at once:
//   INTERFACE <name> <kept|reason>     (--list-interfaces, then it exits)
//   CODE <join code>                   (--make-code: the root's, from its interfaces)
//   STEP started|gaveup <step> <ms since form()> [<error code> <reason>]
//   FORMED <rank> <size> <ms>
//   RECEIVED <source> <payload in hex> (--expect-message: the root's first message)
//   FAILED <error code> <reason>
//   WORLD found|updated|lost <name> <host> <joined> <wanted> <found by> <root id>
//                                      (--browse: the worlds a WorldBrowser lists)
//   PICKED <name> <joined> <wanted>    (--pick NAME: joining that world once listed
//                                      with --pick-joined nodes in; the node's own
//                                      world name is not used)
// With --send <hex>, a node that is not the root sends those bytes to rank 0
// once formed. --root-address takes the root's typed addresses, comma-separated
// (WorldConfig::rootAddresses); --key a world key's text.
#include <mmpi/transport/interfacefilter.h>
#include <mmpi/world/joincode.h>
#include <mmpi/world/world.h>
#include <mmpi/world/worldbrowser.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMetaEnum>
#include <QTimer>

#include <cstdio>
#include <optional>

using namespace mmpi;

namespace {

void say(const QString &line)
{
    std::fputs(qPrintable(line + u'\n'), stdout);
    std::fflush(stdout);
}

QString codeName(ErrorCode code)
{
    return QString::fromLatin1(QMetaEnum::fromType<ErrorCode>().valueToKey(int(code)));
}

QString stepName(World::DiscoveryStep step)
{
    return QString::fromLatin1(QMetaEnum::fromType<World::DiscoveryStep>().valueToKey(int(step)));
}

// The root's part of a message test: the first Data frame, within `ms`.
// Listening from before form() on: a frame may come before waitForFormed()
// returns.
class FirstMessage
{
public:
    explicit FirstMessage(World &world)
    {
        QObject::connect(&world, &World::frameReceived, [this](const Frame &frame) {
            if (m_source != NoRank)
                return;
            m_source = frame.header.source;
            m_payload = frame.payload;
            m_loop.quit();
        });
    }
    bool wait(int ms)
    {
        if (m_source == NoRank) {
            QTimer::singleShot(ms, &m_loop, &QEventLoop::quit);
            m_loop.exec();
        }
        if (m_source == NoRank)
            say(QStringLiteral("FAILED Cancelled no message came within %1 ms").arg(ms));
        else
            say(QStringLiteral("RECEIVED %1 %2").arg(m_source).arg(QString::fromLatin1(m_payload.toHex())));
        return m_source != NoRank;
    }

private:
    QEventLoop m_loop;
    int m_source = NoRank;
    QByteArray m_payload;
};

bool sendToRoot(World &world, const QByteArray &payload)
{
    const auto sent = world.sendFrame(0, makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload));
    if (!sent)
        say(QStringLiteral("FAILED %1 %2").arg(codeName(sent.error().code), sent.error().message));
    return bool(sent);
}

QString worldLine(const QString &what, const WorldBrowser::FoundWorld &w)
{
    const QString by = QString::fromLatin1(QMetaEnum::fromType<WorldBrowser::FoundBy>().valueToKey(int(w.foundBy)));
    return QStringLiteral("WORLD %1 %2 %3 %4 %5 %6 %7")
        .arg(what, w.name, w.host.isEmpty() ? QStringLiteral("-") : w.host)
        .arg(w.joined)
        .arg(w.wanted)
        .arg(by, w.rootId);
}

// Lists the worlds announced nearby until one named `name` has `joined`
// nodes in (or forever with no name); then `config` joins it.
bool browseAndPick(WorldConfig &config, const QString &name, int joined, int ms)
{
    WorldBrowser browser;
    QEventLoop loop;
    std::optional<WorldBrowser::FoundWorld> picked;
    const auto consider = [&](const QString &what, const WorldBrowser::FoundWorld &w) {
        say(worldLine(what, w));
        if (!picked && !name.isEmpty() && w.name == name && w.joined >= joined) {
            picked = w;
            loop.quit();
        }
    };
    QObject::connect(&browser, &WorldBrowser::worldFound, [&](const auto &w) { consider(QStringLiteral("found"), w); });
    QObject::connect(&browser, &WorldBrowser::worldUpdated, [&](const auto &w) { consider(QStringLiteral("updated"), w); });
    QObject::connect(&browser, &WorldBrowser::worldLost, [](const QString &id) { say(QStringLiteral("WORLD lost ") + id); });
    if (auto started = browser.start(config.transport, config.transportOptions); !started) {
        say(QStringLiteral("FAILED %1 %2").arg(codeName(started.error().code), started.error().message));
        return false;
    }
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
    if (!picked) {
        say(QStringLiteral("FAILED DiscoveryTimedOut no world '%1' with %2 joined listed within %3 ms")
                .arg(name).arg(joined).arg(ms));
        return false;
    }
    browser.disconnect(); // its list empties as it goes: no world was lost
    auto joining = browser.joinConfig(picked->rootId, config);
    if (!joining) {
        say(QStringLiteral("FAILED %1 %2").arg(codeName(joining.error().code), joining.error().message));
        return false;
    }
    config = *joining;
    say(QStringLiteral("PICKED %1 %2 %3").arg(config.worldName).arg(picked->joined).arg(config.size));
    return true;
}

void listInterfaces(const QStringList &names)
{
    const InterfaceFilter filter(names);
    for (const QNetworkInterface &interface : QNetworkInterface::allInterfaces()) {
        const QString reason = filter.exclusionReason(InterfaceFilter::factsOf(interface));
        say(QStringLiteral("INTERFACE %1 %2")
                .arg(interface.name(), reason.isEmpty() ? QStringLiteral("kept") : reason));
    }
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption root(QStringLiteral("root"));
    const QCommandLineOption size(QStringLiteral("size"), {}, QStringLiteral("n"), QStringLiteral("1"));
    const QCommandLineOption port(QStringLiteral("beacon-port"), {}, QStringLiteral("port"), QStringLiteral("47474"));
    const QCommandLineOption beaconTimeout(QStringLiteral("beacon-timeout"), {}, QStringLiteral("ms"),
                                           QStringLiteral("3000"));
    const QCommandLineOption dnsSdTimeout(QStringLiteral("dnssd-timeout"), {}, QStringLiteral("ms"),
                                          QStringLiteral("2000"));
    // Comma-separated World::DiscoveryStep names, e.g. "DnsSd,Beacon,JoinCode".
    const QCommandLineOption steps(QStringLiteral("steps"), {}, QStringLiteral("names"),
                                   QStringLiteral("DnsSd,Beacon,JoinCode"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), {}, QStringLiteral("ms"), QStringLiteral("30000"));
    const QCommandLineOption interfaces(QStringLiteral("interfaces"), {}, QStringLiteral("names"));
    const QCommandLineOption listen(QStringLiteral("listen"), {}, QStringLiteral("host"), QStringLiteral("any"));
    const QCommandLineOption joinCode(QStringLiteral("join-code"), {}, QStringLiteral("code"));
    const QCommandLineOption rootAddresses(QStringLiteral("root-address"), {}, QStringLiteral("addresses"));
    const QCommandLineOption key(QStringLiteral("key"), {}, QStringLiteral("text"));
    const QCommandLineOption makeCode(QStringLiteral("make-code"));
    const QCommandLineOption list(QStringLiteral("list-interfaces"));
    const QCommandLineOption send(QStringLiteral("send"), {}, QStringLiteral("hex"));
    const QCommandLineOption expectMessage(QStringLiteral("expect-message"));
    const QCommandLineOption worldName(QStringLiteral("world"), {}, QStringLiteral("name"), QStringLiteral("netns"));
    const QCommandLineOption pick(QStringLiteral("pick"), {}, QStringLiteral("name"));
    const QCommandLineOption pickJoined(QStringLiteral("pick-joined"), {}, QStringLiteral("n"), QStringLiteral("1"));
    const QCommandLineOption lobbyPort(QStringLiteral("lobby-port"), {}, QStringLiteral("port"));
    parser.addOptions({root, size, port, beaconTimeout, dnsSdTimeout, steps, timeout, interfaces, listen, joinCode, makeCode, list, send,
                       expectMessage, worldName, pick, pickJoined, lobbyPort, rootAddresses, key});
    parser.process(app);
    const QStringList names = parser.value(interfaces).split(u',', Qt::SkipEmptyParts);
    if (parser.isSet(list)) {
        listInterfaces(names);
        return 0;
    }

    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transport = QStringLiteral("tcp");
    config.worldName = parser.value(worldName);
    config.size = parser.value(size).toInt();
    config.rank = parser.isSet(root) ? 0 : NoRank;
    config.formationTimeout = std::chrono::milliseconds(parser.value(timeout).toInt());
    config.discoveryTimeout = config.formationTimeout;
    config.beaconTimeout = std::chrono::milliseconds(parser.value(beaconTimeout).toInt());
    config.dnsSdTimeout = std::chrono::milliseconds(parser.value(dnsSdTimeout).toInt());
    config.discoverySteps.clear();
    for (const QString &name : parser.value(steps).split(u',', Qt::SkipEmptyParts)) {
        bool known = false;
        const int value = QMetaEnum::fromType<World::DiscoveryStep>().keyToValue(qPrintable(name), &known);
        if (!known) {
            say(QStringLiteral("FAILED BadConfiguration no discovery step '%1'").arg(name));
            return 1;
        }
        config.discoverySteps << World::DiscoveryStep(value);
    }
    config.transportOptions = {{QStringLiteral("beaconPort"), parser.value(port).toInt()},
                               {QStringLiteral("listenHost"), parser.value(listen)},
                               {QStringLiteral("interfaces"), names},
                               {QStringLiteral("beaconInterval"), 100}};
    if (parser.isSet(lobbyPort))
        config.transportOptions.insert(QStringLiteral("lobbyPort"), parser.value(lobbyPort).toInt());
    config.joinCode = parser.value(joinCode);
    config.rootAddresses = parser.value(rootAddresses).split(u',', Qt::SkipEmptyParts);
    config.worldKey = parser.value(key).toUtf8();
    if (parser.isSet(makeCode)) {
        auto code = JoinCode::generate(JoinCode::codeAddresses(InterfaceFilter(names).addresses()),
                                       quint16(parser.value(port).toInt()));
        if (!code) {
            say(QStringLiteral("FAILED %1 %2").arg(codeName(code.error().code), code.error().message));
            return 1;
        }
        config.joinCode = code->toString();
        say(QStringLiteral("CODE %1").arg(config.joinCode));
    }

    if (parser.isSet(pick)
        && !browseAndPick(config, parser.value(pick), parser.value(pickJoined).toInt(), parser.value(timeout).toInt()))
        return 1;
    World world;
    QElapsedTimer clock;
    clock.start();
    QObject::connect(&world, &World::discoveryStepStarted, [&](World::DiscoveryStep step) {
        say(QStringLiteral("STEP started %1 %2").arg(stepName(step)).arg(clock.elapsed()));
    });
    QObject::connect(&world, &World::discoveryStepGaveUp, [&](World::DiscoveryStep step, const Error &reason) {
        say(QStringLiteral("STEP gaveup %1 %2 %3 %4").arg(stepName(step)).arg(clock.elapsed())
                .arg(codeName(reason.code), reason.message));
    });
    FirstMessage message(world);
    world.form(config);
    const auto formed = world.waitForFormed();
    if (!formed) {
        say(QStringLiteral("FAILED %1 %2").arg(codeName(formed.error().code), formed.error().message));
        return 1;
    }
    say(QStringLiteral("FORMED %1 %2 %3").arg(world.rank()).arg(world.size()).arg(clock.elapsed()));
    if (parser.isSet(send) && world.rank() != 0
        && !sendToRoot(world, QByteArray::fromHex(parser.value(send).toLatin1())))
        return 1;
    if (parser.isSet(expectMessage) && world.rank() == 0 && !message.wait(parser.value(timeout).toInt()))
        return 1;
    // Everyone formed before anyone leaves: a goodbye exchange, bounded.
    world.closeAndWait();
    return 0;
}
