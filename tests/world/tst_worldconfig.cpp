// WorldConfig: the launch environment contract with mmpirun and validation.
#include <mmpi/world/joincode.h>
#include <mmpi/world/rootaddress.h>
#include <mmpi/world/world.h>

#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using namespace Qt::StringLiterals;

namespace {

// Why a result failed, or nothing (QVERIFY2 evaluates its message always).
template <typename T>
QString whyNot(const Result<T> &result)
{
    return result ? QString() : result.error().message;
}

} // namespace

class TestWorldConfig : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void readsLaunchEnvironment();
    void missingRankIsNamed();
    void malformedVariablesAreNamed_data();
    void malformedVariablesAreNamed();
    void validateRejectsBadFields_data();
    void validateRejectsBadFields();
    void chunksTooLargeForTheReplayBufferSayWhatToChange();
    void formWithBadConfigFails();
    void readsHeartbeatAndListenVariables();
    void heartbeatDefaults();
    void rootListenAddressMustBeRootAddress();
    void validateHeartbeat_data();
    void validateHeartbeat();
    void linkQualityNeedsFormedWorld();
    void joinCodeIsChecked();
    void confirmJoinsNeedsAClosedWorld();
    void discoveryStepsAreChecked();
    void stepsTheTransportLacksArePassedOver();
    void rootAddressesAreRead_data();
    void rootAddressesAreRead();
    void malformedRootAddressesAreNamed_data();
    void malformedRootAddressesAreNamed();
    void rootAddressesAreForDiscoveredNodes();
    void addressStepNeedsItsInputAndTheTransport();
};

void TestWorldConfig::init()
{
    for (const char *name : {"MMPI_RANK", "MMPI_SIZE", "MMPI_TRANSPORT", "MMPI_ROOT_ADDRESS",
                             "MMPI_WORLD_KEY", "MMPI_WORLD_NAME", "MMPI_FORMATION_TIMEOUT_MS",
                             "MMPI_LISTEN_ADDRESS", "MMPI_HEARTBEAT_INTERVAL_MS", "MMPI_HEARTBEAT_TIMEOUT_MS",
                             "MMPI_REPLAY_BUFFER_BYTES", "MMPI_CHUNK_BYTES",
                             "MMPI_REJOIN"})
        qunsetenv(name);
}

void TestWorldConfig::readsLaunchEnvironment()
{
    qputenv("MMPI_RANK", "2");
    qputenv("MMPI_SIZE", "4");
    qputenv("MMPI_TRANSPORT", "tcp");
    qputenv("MMPI_ROOT_ADDRESS", "tcp://127.0.0.1:4000");
    qputenv("MMPI_WORLD_KEY", "00ff10AB");
    qputenv("MMPI_WORLD_NAME", "ring");
    qputenv("MMPI_FORMATION_TIMEOUT_MS", "1500");
    QVERIFY(WorldConfig::isLaunched());
    const auto config = WorldConfig::fromEnvironment();
    QVERIFY2(config, config ? "" : qPrintable(config.error().toString()));
    QCOMPARE(config->rank, 2);
    QCOMPARE(config->size, 4);
    QCOMPARE(config->transport, QStringLiteral("tcp"));
    QCOMPARE(config->rootAddress, QStringLiteral("tcp://127.0.0.1:4000"));
    QCOMPARE(config->worldKey, QByteArray::fromHex("00ff10ab"));
    QCOMPARE(config->worldName, QStringLiteral("ring"));
    QCOMPARE(config->formationTimeout.count(), 1500);
    QVERIFY(config->listenAddress.isEmpty());
}

void TestWorldConfig::missingRankIsNamed()
{
    QVERIFY(!WorldConfig::isLaunched());
    const auto config = WorldConfig::fromEnvironment();
    QVERIFY(!config);
    QCOMPARE(config.error().code, ErrorCode::BadConfiguration);
    QVERIFY(config.error().message.contains(QLatin1String("MMPI_RANK")));
}

void TestWorldConfig::malformedVariablesAreNamed_data()
{
    QTest::addColumn<QByteArray>("variable");
    QTest::addColumn<QByteArray>("value");
    QTest::newRow("rank") << QByteArray("MMPI_RANK") << QByteArray("two");
    QTest::newRow("rank range") << QByteArray("MMPI_RANK") << QByteArray("9");
    QTest::newRow("size") << QByteArray("MMPI_SIZE") << QByteArray("");
    QTest::newRow("key") << QByteArray("MMPI_WORLD_KEY") << QByteArray("xyz");
    QTest::newRow("timeout") << QByteArray("MMPI_FORMATION_TIMEOUT_MS") << QByteArray("soon");
    QTest::newRow("heartbeat interval") << QByteArray("MMPI_HEARTBEAT_INTERVAL_MS") << QByteArray("often");
    QTest::newRow("heartbeat timeout") << QByteArray("MMPI_HEARTBEAT_TIMEOUT_MS") << QByteArray("1e3");
    QTest::newRow("chunk") << QByteArray("MMPI_CHUNK_BYTES") << QByteArray("64K");
}

void TestWorldConfig::malformedVariablesAreNamed()
{
    QFETCH(QByteArray, variable);
    QFETCH(QByteArray, value);
    qputenv("MMPI_RANK", "1");
    qputenv("MMPI_SIZE", "2");
    qputenv("MMPI_ROOT_ADDRESS", "local://x");
    qputenv("MMPI_WORLD_KEY", "abcd");
    qputenv(variable.constData(), value);
    const auto config = WorldConfig::fromEnvironment();
    QVERIFY(!config);
    QCOMPARE(config.error().code, ErrorCode::BadConfiguration);
    const bool named = config.error().message.contains(QString::fromLatin1(variable))
                       || config.error().message.contains(QLatin1String("rank 9"));
    QVERIFY2(named, qPrintable(config.error().message));
}

void TestWorldConfig::validateRejectsBadFields_data()
{
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("size");
    QTest::addColumn<bool>("discovered");
    QTest::addColumn<QString>("fragment");
    QTest::newRow("size 0") << 0 << 0 << false << "size";
    QTest::newRow("rank past size") << 3 << 3 << false << "rank 3";
    QTest::newRow("no root address") << 1 << 3 << false << "root";
    QTest::newRow("discovered rank 2") << 2 << 3 << true << "discovered";
}

void TestWorldConfig::validateRejectsBadFields()
{
    QFETCH(int, rank);
    QFETCH(int, size);
    QFETCH(bool, discovered);
    QFETCH(QString, fragment);
    WorldConfig config;
    config.rank = rank;
    config.size = size;
    config.mode = discovered ? WorldConfig::Mode::Discovered : WorldConfig::Mode::Launched;
    const auto valid = config.validate();
    QVERIFY(!valid);
    QVERIFY2(valid.error().message.contains(fragment), qPrintable(valid.error().message));
}

// Chunks are allowed up to 16 MiB, but the default replay buffer holds four
// of 2 MiB at most: raising only the chunk size is refused with an error
// that says which settings to change, and raising the buffer too is fine.
void TestWorldConfig::chunksTooLargeForTheReplayBufferSayWhatToChange()
{
    WorldConfig config;
    config.rank = 0;
    config.size = 2;
    config.chunkSize = 4 * 1024 * 1024;
    const auto valid = config.validate();
    QVERIFY(!valid);
    for (const char *name : {"MMPI_REPLAY_BUFFER_BYTES", "MMPI_CHUNK_BYTES", "4 chunks of 4194304 bytes"})
        QVERIFY2(valid.error().message.contains(QLatin1String(name)), qPrintable(valid.error().message));
    config.replayBufferSize = 4LL * (config.chunkSize + FrameHeaderSize);
    QVERIFY(config.validate());
}

void TestWorldConfig::formWithBadConfigFails()
{
    World world;
    QSignalSpy errors(&world, &World::errorOccurred);
    WorldConfig config;
    config.size = 0;
    world.form(config);
    QCOMPARE(world.state(), World::State::Failed);
    QCOMPARE(errors.size(), 1);
    QCOMPARE(world.error().code, ErrorCode::BadConfiguration);
    QVERIFY(!world.waitForFormed());
    QCOMPARE(world.sendFrame(0, Frame{}).error().code, ErrorCode::NotFormed);
}

void TestWorldConfig::readsHeartbeatAndListenVariables()
{
    // With `name` set to `value` (unset again after): the error's message, or
    // "accepted" if the environment was read.
    const auto refusal = [](const char *name, const char *value) {
        qputenv(name, value);
        const auto config = WorldConfig::fromEnvironment();
        qunsetenv(name);
        return config ? QStringLiteral("accepted") : config.error().message;
    };
    qputenv("MMPI_RANK", "1");
    qputenv("MMPI_SIZE", "2");
    qputenv("MMPI_ROOT_ADDRESS", "tcp://10.77.0.1:4000");
    qputenv("MMPI_WORLD_KEY", "abcd");
    qputenv("MMPI_LISTEN_ADDRESS", "tcp://10.77.0.2:0");
    qputenv("MMPI_HEARTBEAT_INTERVAL_MS", "250");
    qputenv("MMPI_HEARTBEAT_TIMEOUT_MS", "4000");
    qputenv("MMPI_REPLAY_BUFFER_BYTES", "16777216");
    qputenv("MMPI_CHUNK_BYTES", "262144");
    const auto config = WorldConfig::fromEnvironment();
    QVERIFY2(config, config ? "" : qPrintable(config.error().toString()));
    QCOMPARE(config->listenAddress, QStringLiteral("tcp://10.77.0.2:0"));
    QCOMPARE(config->heartbeatInterval.count(), 250);
    QCOMPARE(config->heartbeatTimeout.count(), 4000);
    QCOMPARE(config->replayBufferSize, 16777216);
    QCOMPARE(config->chunkSize, 262144);

    // Each value out of range (the last judged by validate()) is refused
    // with a message that names it.
    struct Refused
    {
        const char *name;
        const char *value;
        const char *message;
    };
    for (const Refused &r : {Refused{"MMPI_CHUNK_BYTES", "100", "chunk size 100"},
                             Refused{"MMPI_HEARTBEAT_TIMEOUT_MS", "500", "heartbeat timeout 500 ms"}}) {
        const QString message = refusal(r.name, r.value);
        QVERIFY2(message.contains(QLatin1String(r.message)), qPrintable(message));
    }
}

void TestWorldConfig::heartbeatDefaults()
{
    const WorldConfig config;
    QCOMPARE(config.heartbeatInterval.count(), 1000);
    QCOMPARE(config.heartbeatTimeout.count(), 10000);
    QVERIFY(config.validate());
}

void TestWorldConfig::rootListenAddressMustBeRootAddress()
{
    qputenv("MMPI_RANK", "0");
    qputenv("MMPI_SIZE", "2");
    qputenv("MMPI_ROOT_ADDRESS", "tcp://10.77.0.1:4000");
    qputenv("MMPI_WORLD_KEY", "abcd");
    qputenv("MMPI_LISTEN_ADDRESS", "tcp://10.77.0.1:4000");
    const auto same = WorldConfig::fromEnvironment();
    QVERIFY2(same, same ? "" : qPrintable(same.error().toString()));
    QCOMPARE(same->listenAddress, QStringLiteral("tcp://10.77.0.1:4000"));
    qputenv("MMPI_LISTEN_ADDRESS", "tcp://10.77.0.9:4000");
    const auto other = WorldConfig::fromEnvironment();
    QVERIFY(!other);
    QVERIFY2(other.error().message.contains(QLatin1String("MMPI_LISTEN_ADDRESS")), qPrintable(other.error().message));

    // A replacement of rank 0 rejoins through a survivor at MMPI_ROOT_ADDRESS
    // and listens elsewhere.
    qputenv("MMPI_REJOIN", "1");
    const auto replacement = WorldConfig::fromEnvironment();
    QVERIFY2(replacement, replacement ? "" : qPrintable(replacement.error().toString()));
    QVERIFY(replacement->rejoin);
    QCOMPARE(replacement->listenAddress, QStringLiteral("tcp://10.77.0.9:4000"));
    QCOMPARE(replacement->rootAddress, QStringLiteral("tcp://10.77.0.1:4000"));
}

void TestWorldConfig::validateHeartbeat_data()
{
    QTest::addColumn<int>("interval");
    QTest::addColumn<int>("timeout");
    QTest::addColumn<QString>("fragment"); // empty: valid
    QTest::newRow("off") << 0 << 0 << QString();
    QTest::newRow("off ignores the timeout") << 0 << 5 << QString();
    QTest::newRow("3 intervals") << 100 << 300 << QString();
    QTest::newRow("interval too short") << 5 << 1000 << "heartbeat interval 5 ms";
    QTest::newRow("negative interval") << -1 << 1000 << "heartbeat interval -1 ms";
    QTest::newRow("interval too long") << 3600001 << 24 * 3600000 << "heartbeat interval 3600001 ms";
    QTest::newRow("under 3 intervals") << 100 << 299 << "heartbeat timeout 299 ms is out of range 300 ms";
    QTest::newRow("timeout over a day") << 1000 << 24 * 3600000 + 1 << "heartbeat timeout 86400001 ms";
}

void TestWorldConfig::validateHeartbeat()
{
    QFETCH(int, interval);
    QFETCH(int, timeout);
    QFETCH(QString, fragment);
    WorldConfig config;
    config.heartbeatInterval = std::chrono::milliseconds(interval);
    config.heartbeatTimeout = std::chrono::milliseconds(timeout);
    const auto valid = config.validate();
    if (fragment.isEmpty()) {
        QVERIFY2(valid, valid ? "" : qPrintable(valid.error().message));
        return;
    }
    QVERIFY(!valid);
    QCOMPARE(valid.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(valid.error().message.contains(fragment), qPrintable(valid.error().message));
}

void TestWorldConfig::linkQualityNeedsFormedWorld()
{
    World world;
    QCOMPARE(world.linkQuality(1).error().code, ErrorCode::NotFormed);
}

void TestWorldConfig::joinCodeIsChecked()
{
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.size = 2;
    config.joinCode = QStringLiteral("040J-6HB7-H6NV-JWP0-N00H-FYFZ");
    QVERIFY(config.validate());
    // A mistyped code is BadJoinCode with its reason, before anything forms.
    config.joinCode = QStringLiteral("040J-6HB7-H6NV-JWP0-N00H-FYF0");
    const auto typo = config.validate();
    QVERIFY(!typo);
    QCOMPARE(typo.error().code, ErrorCode::BadJoinCode);
    QVERIFY2(typo.error().message.contains(QStringLiteral("mistyped")), qPrintable(typo.error().message));
    // Launched worlds have their root's address and key already.
    config.joinCode = QStringLiteral("040J-6HB7-H6NV-JWP0-N00H-FYFZ");
    config.mode = WorldConfig::Mode::Launched;
    config.rank = 0;
    const auto launched = config.validate();
    QVERIFY(!launched);
    QCOMPARE(launched.error().code, ErrorCode::BadConfiguration);
    config.mode = WorldConfig::Mode::Discovered;
    config.beaconTimeout = std::chrono::milliseconds(0);
    QCOMPARE(config.validate().error().code, ErrorCode::BadConfiguration);
}


// Confirming joins protects a world only if joining it takes a key: form()
// refuses it without one, saying so, and takes it with a key or a join code.
void TestWorldConfig::confirmJoinsNeedsAClosedWorld()
{
    WorldConfig config;
    config.size = 2;
    config.confirmJoins = true;
    QCOMPARE(config.confirmTimeout, std::chrono::milliseconds(60000));
    const auto open = config.validate();
    QVERIFY(!open);
    QCOMPARE(open.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(open.error().message.contains(QLatin1String("confirmJoins")), qPrintable(open.error().message));
    World world;
    world.form(config);
    QCOMPARE(world.state(), World::State::Failed);
    QCOMPARE(world.error().code, ErrorCode::BadConfiguration);

    config.worldKey = QByteArray(32, 'k');
    QVERIFY(config.validate());
    config.confirmTimeout = std::chrono::milliseconds(0);
    QCOMPARE(config.validate().error().code, ErrorCode::BadConfiguration);
    config.confirmTimeout = std::chrono::milliseconds(1000);
    config.worldKey.clear();
    config.mode = WorldConfig::Mode::Discovered;
    config.joinCode = QStringLiteral("040J-6HB7-H6NV-JWP0-N00H-FYFZ");
    QVERIFY(config.validate());
}


// The fallback chain's order is the app's: DNS-SD, beacon, join code, typed
// address by default; no step twice, the two that wait for a person last
// (in either order), a positive DNS-SD timeout.
void TestWorldConfig::discoveryStepsAreChecked()
{
    using Step = WorldConfig::DiscoveryStep;
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.size = 2;
    QCOMPARE(config.discoverySteps, (QList<Step>{Step::DnsSd, Step::Beacon, Step::JoinCode, Step::Address}));
    QCOMPARE(config.dnsSdTimeout, std::chrono::milliseconds(2000));
    QVERIFY(config.validate());
    config.discoverySteps = {Step::Beacon, Step::DnsSd};
    QVERIFY(config.validate());
    const auto expectRefused = [&](const QString &part) {
        const auto checked = config.validate();
        QVERIFY(!checked);
        QCOMPARE(checked.error().code, ErrorCode::BadConfiguration);
        QVERIFY2(checked.error().message.contains(part), qPrintable(checked.error().message));
    };
    config.discoverySteps = {};
    expectRefused(QStringLiteral("at least one discovery step"));
    config.discoverySteps = {Step::DnsSd, Step::Beacon, Step::DnsSd};
    expectRefused(QStringLiteral("DnsSd is listed twice"));
    config.discoverySteps = {Step::JoinCode, Step::Beacon};
    expectRefused(QStringLiteral("discovery step Beacon comes after JoinCode, which waits for a person"));
    config.discoverySteps = {Step::Address, Step::JoinCode, Step::DnsSd};
    expectRefused(QStringLiteral("discovery step DnsSd comes after JoinCode, which waits for a person"));
    config.discoverySteps = {Step::Beacon, Step::Address, Step::JoinCode};
    QVERIFY(config.validate());
    config.discoverySteps = {Step::Address};
    QVERIFY(config.validate());
    config.discoverySteps = {Step::Beacon, Step::Address, Step::Address};
    expectRefused(QStringLiteral("Address is listed twice"));
    config.discoverySteps = {Step(7)};
    expectRefused(QStringLiteral("discovery step 7 is not a step"));
    config.discoverySteps = {Step::DnsSd};
    config.dnsSdTimeout = std::chrono::milliseconds(0);
    expectRefused(QStringLiteral("timeouts must be positive"));
    // A launched world does not discover: its list is not looked at.
    config.dnsSdTimeout = std::chrono::milliseconds(2000);
    config.mode = WorldConfig::Mode::Launched;
    config.rank = 0;
    config.discoverySteps = {};
    QVERIFY(config.validate());
}

// A step the transport does not offer is passed over without a word (local
// has no DNS-SD): the root's chain starts with the beacon; with no step
// left that can run, formation fails at once, saying why.
void TestWorldConfig::stepsTheTransportLacksArePassedOver()
{
    using Step = WorldConfig::DiscoveryStep;
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transport = QStringLiteral("local");
    config.worldName = QStringLiteral("steps-%1").arg(QCoreApplication::applicationPid());
    config.size = 2;
    config.formationTimeout = std::chrono::milliseconds(2000);
    {
        World world;
        QSignalSpy started(&world, &World::discoveryStepStarted);
        world.form(config);
        QTRY_VERIFY_WITH_TIMEOUT(!started.isEmpty(), 5000);
        QCOMPARE(started.first().first().value<World::DiscoveryStep>(), Step::Beacon);
        world.close();
        QTRY_COMPARE_WITH_TIMEOUT(world.state(), World::State::Closed, 5000);
    }
    config.discoverySteps = {Step::DnsSd};
    World world;
    QSignalSpy started(&world, &World::discoveryStepStarted);
    world.form(config);
    QTRY_COMPARE_WITH_TIMEOUT(world.state(), World::State::Failed, 1500);
    QCOMPARE(world.error().code, ErrorCode::DiscoveryFailed);
    QVERIFY2(world.error().message.contains(QStringLiteral("no discovery step of 1 can run over transport local")),
             qPrintable(world.error().message));
    QVERIFY(started.isEmpty());
}

// What a person may type: an IPv4 address or a host name, with a port or
// the root's beacon port (this node's `beaconPort`, else the tcp default).
void TestWorldConfig::rootAddressesAreRead_data()
{
    QTest::addColumn<QString>("typed");
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<bool>("isName");
    QTest::newRow("ipv4") << "192.168.1.20" << "192.168.1.20" << 40001 << false;
    QTest::newRow("ipv4 and port") << "10.0.0.7:5000" << "10.0.0.7" << 5000 << false;
    QTest::newRow("spaces around") << "  10.0.0.7 " << "10.0.0.7" << 40001 << false;
    QTest::newRow("loopback") << "127.0.0.1" << "127.0.0.1" << 40001 << false;
    QTest::newRow("name") << "Root-1.example" << "root-1.example" << 40001 << true;
    QTest::newRow("name and port") << "laptop.local:47474" << "laptop.local" << 47474 << true;
    QTest::newRow("rooted name") << "laptop.local." << "laptop.local" << 40001 << true;
    QTest::newRow("single label") << "localhost" << "localhost" << 40001 << true;
    QTest::newRow("international name") << u"bücher.example"_s << "xn--bcher-kva.example" << 40001 << true;
}

void TestWorldConfig::rootAddressesAreRead()
{
    QFETCH(QString, typed);
    QFETCH(QString, host);
    QFETCH(int, port);
    QFETCH(bool, isName);
    const QVariantMap options{{QStringLiteral("beaconPort"), 40001}};
    QCOMPARE(RootAddress::beaconPort(options), quint16(40001));
    QCOMPARE(RootAddress::beaconPort({}), JoinCode::DefaultBeaconPort);
    const auto address = RootAddress::parse(typed, RootAddress::beaconPort(options));
    QVERIFY2(address, qPrintable(whyNot(address)));
    QCOMPARE(address->host(), host);
    QCOMPARE(address->port(), quint16(port));
    QCOMPARE(address->isName(), isName);
    QCOMPARE(address->contact(), isName ? QString() : QStringLiteral("tcp://%1:%2").arg(host).arg(port));

    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.rank = NoRank;
    config.size = 2;
    config.transportOptions = options;
    config.rootAddresses = {typed};
    QVERIFY2(config.validate(), qPrintable(whyNot(config.validate())));
}

void TestWorldConfig::malformedRootAddressesAreNamed_data()
{
    QTest::addColumn<QStringList>("typed");
    QTest::addColumn<QString>("part");
    const auto row = [](const char *name, QStringList typed, const char *part) {
        QTest::newRow(name) << typed << QString::fromUtf8(part);
    };
    row("empty", {u""_s}, "root address '' is empty");
    row("blank", {u"10.0.0.7"_s, u"  "_s}, "is empty");
    row("scheme", {u"tcp://10.0.0.7:5000"_s}, "'tcp://10.0.0.7:5000' has a scheme");
    row("ipv6", {u"fe80::1"_s}, "'fe80::1' is an IPv6 address: the root hears adverts over IPv4 only");
    row("ipv6 bracketed", {u"[::1]:5000"_s}, "'[::1]:5000' is an IPv6 address");
    row("port 0", {u"10.0.0.7:0"_s}, "'10.0.0.7:0' has port '0', not one of 1..65535");
    row("port too big", {u"10.0.0.7:70000"_s}, "has port '70000'");
    row("port text", {u"host.example:http"_s}, "has port 'http'");
    row("no port after colon", {u"10.0.0.7:"_s}, "has port ''");
    row("three numbers", {u"10.0.1"_s}, "'10.0.1' is not an IPv4 address");
    row("number too big", {u"300.1.2.3"_s}, "'300.1.2.3' is not an IPv4 address");
    row("multicast", {u"224.0.0.251"_s}, "'224.0.0.251' is not a unicast IPv4 address");
    row("broadcast", {u"255.255.255.255"_s}, "is not a unicast IPv4 address");
    row("any", {u"0.0.0.0"_s}, "is not a unicast IPv4 address");
    row("underscore", {u"my_root"_s}, "'my_root' is neither an IPv4 address nor a host name");
    row("leading dash", {u"-root.example"_s}, "is neither an IPv4 address nor a host name");
    row("empty label", {u"root..example"_s}, "is neither an IPv4 address nor a host name");
    row("label too long", {QString(64, u'a') + u".example"_s}, "is neither an IPv4 address nor a host name");
    row("two in one", {u"10.0.0.7, 10.0.0.8"_s}, "'10.0.0.7, 10.0.0.8' is neither");
    row("two ports", {u"10.0.0.7:5000"_s, u"10.0.0.8:5001"_s},
        "root addresses '10.0.0.7:5000' and '10.0.0.8:5001' name ports 5000 and 5001: a root hears adverts on one port");
    row("default and other port", {u"10.0.0.7"_s, u"10.0.0.8:5001"_s}, "name ports 47474 and 5001");
    row("too many", {u"10.0.0.1"_s, u"10.0.0.2"_s, u"10.0.0.3"_s, u"10.0.0.4"_s, u"10.0.0.5"_s},
        "5 root addresses, more than 4");
}

// A malformed entry is refused before anything forms, BadAddress naming it.
void TestWorldConfig::malformedRootAddressesAreNamed()
{
    QFETCH(QStringList, typed);
    QFETCH(QString, part);
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.rank = NoRank;
    config.size = 2;
    config.rootAddresses = typed;
    const auto checked = config.validate();
    QVERIFY(!checked);
    QCOMPARE(checked.error().code, ErrorCode::BadAddress);
    QVERIFY2(checked.error().message.contains(part), qPrintable(checked.error().message));
    World world;
    world.form(config);
    QCOMPARE(world.state(), World::State::Failed);
    QCOMPARE(world.error().code, ErrorCode::BadAddress);
}

// A launched node has its root's address (rootAddress); a discovered root
// needs none and ignores them, as a shared set-up may give them to all.
void TestWorldConfig::rootAddressesAreForDiscoveredNodes()
{
    WorldConfig config;
    config.mode = WorldConfig::Mode::Launched;
    config.rank = 0;
    config.size = 2;
    config.rootAddresses = {u"10.0.0.7"_s};
    const auto launched = config.validate();
    QVERIFY(!launched);
    QCOMPARE(launched.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(launched.error().message.contains(u"typed root addresses are for discovered worlds"_s),
             qPrintable(launched.error().message));
    config.mode = WorldConfig::Mode::Discovered;
    QVERIFY(config.validate());
    // A typed address carries no key: confirming joins still needs one.
    config.confirmJoins = true;
    const auto open = config.validate();
    QVERIFY(!open);
    QCOMPARE(open.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(open.error().message.contains(u"a typed root address carries no key"_s), qPrintable(open.error().message));
}

// A node passes the Address step over without addresses; with them over a
// transport that cannot send adverts to an address (local), the step
// starts and gives up saying so, and with no other step formation fails
// with that reason at once.
void TestWorldConfig::addressStepNeedsItsInputAndTheTransport()
{
    using Step = WorldConfig::DiscoveryStep;
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transport = QStringLiteral("local");
    config.worldName = QStringLiteral("address-%1").arg(QCoreApplication::applicationPid());
    config.rank = NoRank;
    config.size = 2;
    config.formationTimeout = std::chrono::milliseconds(5000);
    config.discoverySteps = {Step::Address};
    {
        World world;
        QSignalSpy started(&world, &World::discoveryStepStarted);
        world.form(config);
        QTRY_COMPARE_WITH_TIMEOUT(world.state(), World::State::Failed, 2000);
        QCOMPARE(world.error().code, ErrorCode::DiscoveryFailed);
        QVERIFY2(world.error().message.contains(u"no discovery step of 1 can run"_s), qPrintable(world.error().message));
        QVERIFY(started.isEmpty());
    }
    config.rootAddresses = {u"127.0.0.1"_s};
    World world;
    QSignalSpy started(&world, &World::discoveryStepStarted);
    QSignalSpy gaveUp(&world, &World::discoveryStepGaveUp);
    world.form(config);
    QTRY_COMPARE_WITH_TIMEOUT(world.state(), World::State::Failed, 2000);
    QCOMPARE(started.size(), 1);
    QCOMPARE(started.first().first().value<World::DiscoveryStep>(), Step::Address);
    QCOMPARE(gaveUp.size(), 1);
    QCOMPARE(gaveUp.first().first().value<World::DiscoveryStep>(), Step::Address);
    const auto reason = gaveUp.first().at(1).value<Error>();
    QCOMPARE(reason.code, ErrorCode::DiscoveryFailed);
    QCOMPARE(world.error().code, ErrorCode::DiscoveryFailed);
    QCOMPARE(world.error().message, reason.message);
}

QTEST_GUILESS_MAIN(TestWorldConfig)
#include "tst_worldconfig.moc"
