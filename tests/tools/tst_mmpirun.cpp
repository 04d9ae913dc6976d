// tst_mmpirun: runs the real mmpirun with mmpirun_probe as the node program and
// checks the launch environment contract, output forwarding, exit statuses,
// stopping on failure, timeouts, signals, --kill and usage errors
// (docs/guide/mmpirun.md).
#include "processrun.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cerrno>
#include <csignal>

namespace {

using namespace mmpi::test;
using namespace Qt::StringLiterals;

const QString probe = QStringLiteral(MMPIRUN_PROBE_PATH);
const QString ftApp = QStringLiteral(MMPIRUN_FTAPP_PATH);

// Every job here ends within seconds: a hung one fails the test early.
ProcessRun mmpirun(const QStringList &args, const std::optional<QProcessEnvironment> &env = {})
{
    return runMmpirun(args, {.timeoutMs = 30000, .environment = env});
}

QStringList probeArgs(int nodes, const QStringList &options, const QStringList &probeOptions)
{
    return QStringList{u"-n"_s, QString::number(nodes)} + options + QStringList{u"--"_s, probe} + probeOptions;
}

// One probe's report of its environment, as forwarded by mmpirun.
struct Report
{
    int prefixRank = -1;
    int rank = -1;
    int size = 0;
    QString transport, root, keyHash, timeout, launcher, world;
    int keyLength = 0;
    bool keyIsHex = false;
    qint64 pid = 0;
};

QList<Report> reports(const QString &out)
{
    static const QRegularExpression line(
        uR"(^\[(\d+)\] rank=(\d+) size=(\d+) transport=(\S*) root=(\S*) keylen=(\d+) keyhash=(\S+) )"
        uR"(keyhex=(\d) timeout=(\S*) launcher=(\S*) pid=(\d+) world=(.*)$)"_s,
        QRegularExpression::MultilineOption);
    QList<Report> result;
    for (auto it = line.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        Report r;
        r.prefixRank = m.captured(1).toInt();
        r.rank = m.captured(2).toInt();
        r.size = m.captured(3).toInt();
        r.transport = m.captured(4);
        r.root = m.captured(5);
        r.keyLength = m.captured(6).toInt();
        r.keyHash = m.captured(7);
        r.keyIsHex = m.captured(8) == u"1"_s;
        r.timeout = m.captured(9);
        r.launcher = m.captured(10);
        r.pid = m.captured(11).toLongLong();
        r.world = m.captured(12);
        result << r;
    }
    return result;
}

bool processGone(qint64 pid)
{
    return ::kill(pid_t(pid), 0) == -1 && errno == ESRCH;
}

bool allGone(const QList<Report> &reports)
{
    for (const auto &r : reports) {
        if (!processGone(r.pid))
            return false;
    }
    return true;
}

} // namespace

class TestMmpirun : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void helpListsEveryOption();
    void badNodeCount_data();
    void badNodeCount();
    void otherUsageErrors_data();
    void otherUsageErrors();
    void missingProgram_data();
    void missingProgram();
    void programNotExecutable();
    void programFoundNextToMmpirun();

    void environmentContract_data();
    void environmentContract();
    void worldNameOption();
    void simTransportOptions();
    void transportOptionsOnlyForSim();
    void rankAddresses_data();
    void rankAddresses();
    void listenAddressOnlyWithRankAddress();
    void rankPrefixStartsEveryNode();

    void prefixedLinesNeverInterleave();
    void partialLastLineIsFlushed();
    void noPrefix();
    void nodesAreBoundToCpus();

    void successIsSilent();
    void failingNodeStopsTheOthers();
    void keepGoingLetsTheOthersFinish();
    void crashCountsAsSignal();
    void socketsOfFinishedNodesAreRemoved();
    void nodesIgnoringTerminateAreKilled();
    void timeoutStopsTheJob();
    void signalsAreForwarded_data();
    void signalsAreForwarded();

    void killedRankCrashesWhileTheOthersRunOn();
    void killsMillisecondsApartBothHappen();
    void killedRankIsRespawned();
    void killOfAnEndedRankIsSkipped();
};

void TestMmpirun::helpListsEveryOption()
{
    const ProcessRun run = mmpirun({u"--help"_s});
    QCOMPARE(run.exitCode, 0);
    for (const char *word : {"-n", "--transport", "--timeout", "--formation-timeout", "--world-name", "--keep-going",
                             "--no-prefix", "--link", "--link-latency", "--link-bandwidth", "--fault", "--kill", "default",
                             "MMPI_RANK", "MMPI_SIZE", "MMPI_TRANSPORT", "MMPI_ROOT_ADDRESS", "MMPI_WORLD_KEY",
                             "MMPI_WORLD_NAME", "MMPI_FORMATION_TIMEOUT_MS", "MMPI_LAUNCHER", "MMPI_TRANSPORT_OPTIONS",
                             "--rank-prefix", "--rank-address", "MMPI_LISTEN_ADDRESS", "ip netns exec",
                             "Exit status", "Examples"})
        QVERIFY2(run.out.contains(QLatin1String(word)), word);
}

void TestMmpirun::badNodeCount_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addRow("zero") << QStringList{u"-n"_s, u"0"_s, probe};
    QTest::addRow("negative") << QStringList{u"-n"_s, u"-1"_s, probe};
    QTest::addRow("text") << QStringList{u"-n"_s, u"abc"_s, probe};
    QTest::addRow("too many") << QStringList{u"-n"_s, u"1000"_s, probe};
    QTest::addRow("fraction") << QStringList{u"-n"_s, u"2.5"_s, probe};
    QTest::addRow("missing") << QStringList{probe};
}

void TestMmpirun::badNodeCount()
{
    QFETCH(QStringList, args);
    const ProcessRun run = mmpirun(args);
    QVERIFY2(run.exitCode == 2, qPrintable(run.dump()));
    QVERIFY2(run.err.startsWith(u"mmpirun: "_s) && run.err.contains(u"1 to 256"_s), qPrintable(run.err));
    QVERIFY2(run.out.isEmpty(), qPrintable(run.out));
}

void TestMmpirun::otherUsageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::addRow("transport") << QStringList{u"-n"_s, u"2"_s, u"--transport"_s, u"carrier-pigeon"_s, probe}
                               << u"unknown transport 'carrier-pigeon'"_s;
    QTest::addRow("timeout") << QStringList{u"-n"_s, u"2"_s, u"--timeout"_s, u"-3"_s, probe} << u"--timeout"_s;
    QTest::addRow("formation") << QStringList{u"-n"_s, u"2"_s, u"--formation-timeout"_s, u"0"_s, probe}
                               << u"--formation-timeout"_s;
    QTest::addRow("option") << QStringList{u"-n"_s, u"2"_s, u"--frobnicate"_s, probe} << u"frobnicate"_s;
    QTest::addRow("no program") << QStringList{u"-n"_s, u"2"_s} << u"no program"_s;
    QTest::addRow("binding") << QStringList{u"-n"_s, u"2"_s, u"--bind-to"_s, u"socket"_s, probe}
                             << u"--bind-to must be auto, core or none, not 'socket'"_s;

    const QStringList sim{u"-n"_s, u"2"_s, u"--transport"_s, u"sim"_s};
    QTest::addRow("link without sim") << QStringList{u"-n"_s, u"2"_s, u"--link"_s, u"wifi"_s, probe}
                                      << u"mmpirun: --link needs --transport sim"_s;
    QTest::addRow("fault without sim")
        << QStringList{u"-n"_s, u"2"_s, u"--transport"_s, u"tcp"_s, u"--fault"_s, u"rank 1 io-error at 1s"_s, probe}
        << u"mmpirun: --fault needs --transport sim"_s;
    QTest::addRow("unknown profile") << sim + QStringList{u"--link"_s, u"carrier-pigeon"_s, probe}
                                     << u"mmpirun: --link: unknown link profile 'carrier-pigeon' (known: "_s;
    QTest::addRow("latency as a word") << sim + QStringList{u"--link-latency"_s, u"soon"_s, probe}
                                       << u"mmpirun: --link-latency expects a whole number of milliseconds, got 'soon'"_s;
    QTest::addRow("latency too long") << sim + QStringList{u"--link-latency"_s, u"100000"_s, probe}
                                      << u"mmpirun: --link-latency: 100000 is outside 0..60000"_s;
    QTest::addRow("negative bandwidth") << sim + QStringList{u"--link-bandwidth"_s, u"-5"_s, probe}
                                        << u"mmpirun: --link-bandwidth expects a whole number of bytes per second"_s;
    QTest::addRow("fault syntax") << sim + QStringList{u"--fault"_s, u"rank 1 explodes at 1s"_s, probe}
                                  << u"mmpirun: --fault: fault 'rank 1 explodes at 1s': unknown event 'explodes'"_s;
    QTest::addRow("fault without for")
        << sim + QStringList{u"--fault"_s, u"rank 1 io-error at 1s"_s, u"--fault"_s, u"rank 0 out-of-range at 1s"_s, probe}
        << u"out-of-range needs 'for <time>'"_s;
    QTest::addRow("fault rank beyond -n") << sim + QStringList{u"--fault"_s, u"rank 2 terminates at 1s"_s, probe}
                                          << u"fault 'rank 2 terminates at 1s' names rank 2, but the world has 2 node(s)"_s;

    const QStringList four{u"-n"_s, u"4"_s, u"--kill"_s};
    QTest::addRow("kill rank beyond -n") << four + QStringList{u"rank 4 at 1s"_s, probe}
                                         << u"mmpirun: --kill 'rank 4 at 1s': rank 4 is outside 0..3 (-n 4)"_s;
    QTest::addRow("kill malformed") << four + QStringList{u"node 1 at 1s"_s, probe}
                                    << u"mmpirun: --kill 'node 1 at 1s': not of the form 'rank R at T'"_s;
    QTest::addRow("kill trailing words") << four + QStringList{u"rank 1 at 1s for 2s"_s, probe}
                                         << u"mmpirun: --kill 'rank 1 at 1s for 2s': not of the form"_s;
    QTest::addRow("kill rank a word") << four + QStringList{u"rank one at 1s"_s, probe}
                                      << u"mmpirun: --kill 'rank one at 1s': 'one' is not a rank"_s;
    QTest::addRow("kill negative time") << four + QStringList{u"rank 1 at -1s"_s, probe}
                                        << u"mmpirun: --kill 'rank 1 at -1s': the time '-1s' is negative"_s;
    QTest::addRow("kill time without unit")
        << four + QStringList{u"rank 1 at 2"_s, probe}
        << u"mmpirun: --kill 'rank 1 at 2': the time '2' is not a time like 3s, 1.5s or 250ms"_s;
    QTest::addRow("kill after a day") << four + QStringList{u"rank 1 at 86401s"_s, probe}
                                      << u"the time '86401s' is longer than a day"_s;

    const QStringList tcp{u"-n"_s, u"3"_s, u"--transport"_s, u"tcp"_s};
    QTest::addRow("address without tcp") << QStringList{u"-n"_s, u"2"_s, u"--rank-address"_s, u"10.0.0.{rank}"_s, probe}
                                         << u"mmpirun: --rank-address needs --transport tcp"_s;
    QTest::addRow("address past 255") << tcp + QStringList{u"--rank-address"_s, u"10.0.0.{rank+254}"_s, probe}
                                      << u"mmpirun: --rank-address: '10.0.0.256' (rank 2) is not an IP address"_s;
    QTest::addRow("address a name") << tcp + QStringList{u"--rank-address"_s, u"node{rank}.local"_s, probe}
                                    << u"mmpirun: --rank-address: 'node0.local' (rank 0) is not an IP address"_s;
    QTest::addRow("address short form") << tcp + QStringList{u"--rank-address"_s, u"10.{rank+1}"_s, probe}
                                        << u"mmpirun: --rank-address: '10.1' (rank 0) is not an IP address"_s;
    QTest::addRow("address any") << tcp + QStringList{u"--rank-address"_s, u"0.0.0.0"_s, probe}
                                 << u"mmpirun: --rank-address: 0.0.0.0 (rank 0) is not a unicast address"_s;
    QTest::addRow("address multicast") << tcp + QStringList{u"--rank-address"_s, u"ff02::{rank+1}"_s, probe}
                                       << u"mmpirun: --rank-address: ff02::1 (rank 0) is not a unicast address"_s;
    QTest::addRow("address placeholder") << tcp + QStringList{u"--rank-address"_s, u"10.0.0.{node}"_s, probe}
                                         << u"mmpirun: --rank-address: '{node}' at position 8 of '10.0.0.{node}' is not "
                                            "a placeholder (use {rank} or {rank+N})"_s;
    QTest::addRow("address twice") << tcp + QStringList{u"--rank-address"_s, u"10.0.0.1"_s, u"--rank-address"_s,
                                                        u"10.0.0.2"_s, probe}
                                   << u"mmpirun: --rank-address is given 2 times; give it once"_s;
    QTest::addRow("prefix empty") << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u" "_s, probe}
                                  << u"mmpirun: --rank-prefix is empty"_s;
    QTest::addRow("prefix unclosed") << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u"ip netns exec ns{rank"_s, probe}
                                     << u"mmpirun: --rank-prefix: '{rank' at position 3 of 'ns{rank' is not a placeholder"_s;
    QTest::addRow("prefix stray brace") << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u"env X=}"_s, probe}
                                        << u"mmpirun: --rank-prefix: '}' at position 3 of 'X=}' closes no placeholder"_s;
    QTest::addRow("prefix offset") << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u"env X={rank+70000}"_s, probe}
                                   << u"mmpirun: --rank-prefix: '{rank+70000}' in 'X={rank+70000}': N is at most 65535"_s;
    QTest::addRow("prefix command") << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u"mmpi-no-such-wrapper x"_s, probe}
                                    << u"mmpirun: --rank-prefix: program 'mmpi-no-such-wrapper' not found"_s;
    QTest::addRow("prefix command per rank")
        << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u"mmpi-wrapper-{rank}"_s, probe}
        << u"mmpirun: --rank-prefix: program 'mmpi-wrapper-0' not found on PATH or in "_s;
    QTest::addRow("prefix twice") << QStringList{u"-n"_s, u"2"_s, u"--rank-prefix"_s, u"env"_s, u"--rank-prefix"_s,
                                                 u"env"_s, probe}
                                  << u"mmpirun: --rank-prefix is given 2 times; give it once"_s;
}

void TestMmpirun::otherUsageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const ProcessRun run = mmpirun(args);
    if (run.exitCode != 2 || !run.err.contains(message))
        QFAIL(qPrintable(run.dump()));
    QVERIFY(run.out.isEmpty());
}

void TestMmpirun::missingProgram_data()
{
    QTest::addColumn<QString>("program");
    QTest::addRow("path") << u"/nonexistent/mmpi-no-such-program"_s;
    QTest::addRow("name") << u"mmpi-no-such-program"_s;
}

void TestMmpirun::missingProgram()
{
    QFETCH(QString, program);
    const ProcessRun run = mmpirun({u"-n"_s, u"3"_s, program, u"--lines"_s, u"1"_s});
    QVERIFY2(run.exitCode == 2, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"mmpirun: program '%1'"_s.arg(program)), qPrintable(run.err));
    QVERIFY2(!run.err.contains(u"failed to start"_s), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

void TestMmpirun::programNotExecutable()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"not-executable"_s);
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("#!/bin/sh\necho should not run\n");
    file.close();
    QVERIFY(file.setPermissions(QFile::ReadOwner | QFile::WriteOwner));

    const ProcessRun run = mmpirun({u"-n"_s, u"2"_s, path});
    QVERIFY2(run.exitCode == 127, qPrintable(run.dump()));
    static const QRegularExpression failed(uR"(mmpirun: node \d failed to start: .+)"_s);
    QVERIFY2(failed.match(run.err).hasMatch(), qPrintable(run.err));
    QVERIFY(!run.out.contains(u"should not run"_s));
}

void TestMmpirun::programFoundNextToMmpirun()
{
    // The probe is built next to mmpirun (bin/), which is not on this PATH.
    const QProcessEnvironment env = systemEnvironmentWith({{u"PATH"_s, u"/usr/bin:/bin"_s}});
    const ProcessRun run = mmpirun({u"-n"_s, u"2"_s, QFileInfo(probe).fileName()}, env);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QCOMPARE(reports(run.out).size(), 2);
}

void TestMmpirun::environmentContract_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addRow("local") << u"local"_s;
    QTest::addRow("tcp") << u"tcp"_s;
}

void TestMmpirun::environmentContract()
{
    QFETCH(QString, transport);
    const ProcessRun run = mmpirun(probeArgs(4, {u"--transport"_s, transport, u"--formation-timeout"_s, u"5"_s}, {}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QList<Report> all = reports(run.out);
    QVERIFY2(all.size() == 4, qPrintable(run.dump()));

    QSet<int> ranks;
    for (const Report &r : all) {
        ranks.insert(r.rank);
        QCOMPARE(r.prefixRank, r.rank);
        QCOMPARE(r.size, 4);
        QCOMPARE(r.transport, transport);
        QCOMPARE(r.root, all[0].root);
        QCOMPARE(r.keyHash, all[0].keyHash);
        QCOMPARE(r.keyLength, 64);
        QVERIFY(r.keyIsHex);
        QCOMPARE(r.world, u"mmpirun-%1"_s.arg(run.pid));
        QCOMPARE(r.timeout, u"5000"_s);
        QCOMPARE(r.launcher, u"mmpirun"_s);
    }
    QCOMPARE(ranks, (QSet<int>{0, 1, 2, 3}));

    if (transport == u"local"_s) {
        const QRegularExpression local(u"^local://mmpi-%1-[0-9a-f]{8}$"_s.arg(run.pid));
        QVERIFY2(local.match(all[0].root).hasMatch(), qPrintable(all[0].root));
    } else {
        static const QRegularExpression tcp(uR"(^tcp://127\.0\.0\.1:(\d+)$)"_s);
        const auto m = tcp.match(all[0].root);
        QVERIFY2(m.hasMatch(), qPrintable(all[0].root));
        const int port = m.captured(1).toInt();
        QVERIFY(port > 0 && port < 65536);
        // The probes never listened, so the port mmpirun picked is free again.
        QTcpServer server;
        QVERIFY2(server.listen(QHostAddress::LocalHost, quint16(port)), qPrintable(server.errorString()));
    }

    // A fresh key every run.
    const ProcessRun again = mmpirun(probeArgs(1, {u"--transport"_s, transport}, {}));
    QCOMPARE(again.exitCode, 0);
    QCOMPARE(reports(again.out).size(), 1);
    QVERIFY(reports(again.out)[0].keyHash != all[0].keyHash);
    // The key itself is never printed by mmpirun.
    QVERIFY(!run.err.contains(u"MMPI_WORLD_KEY"_s));
}

void TestMmpirun::worldNameOption()
{
    const ProcessRun run = mmpirun(probeArgs(2, {u"--world-name"_s, u"chess club"_s}, {}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QList<Report> all = reports(run.out);
    QCOMPARE(all.size(), 2);
    for (const Report &r : all)
        QCOMPARE(r.world, u"chess club"_s);
}

namespace {

// What `sh -c` prints of each node's sim environment, by rank.
QMap<int, QStringList> shellReports(const QString &out)
{
    static const QRegularExpression line(uR"(^\[(\d+)\] rank=(\d*) transport=(\S*) root=(\S*) options=(.*)$)"_s,
                                         QRegularExpression::MultilineOption);
    QMap<int, QStringList> result;
    for (auto it = line.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        result.insert(m.captured(1).toInt(), {m.captured(2), m.captured(3), m.captured(4), m.captured(5)});
    }
    return result;
}

const QStringList printSimEnvironment{
    u"/bin/sh"_s, u"-c"_s,
    uR"(printf 'rank=%s transport=%s root=%s options=%s\n' "$MMPI_RANK" "$MMPI_TRANSPORT" "$MMPI_ROOT_ADDRESS" "$MMPI_TRANSPORT_OPTIONS")"_s};

} // namespace

// Every node gets the link options as JSON, with its own rank and the world
// size, so that the sim transport can pick out the faults of its rank.
void TestMmpirun::simTransportOptions()
{
    const QStringList faults{u"rank 1 io-error at 2s"_s, u"rank 2 out-of-range at 1.5s for 250ms"_s};
    const ProcessRun run = mmpirun(QStringList{u"-n"_s, u"3"_s, u"--transport"_s, u"sim"_s, u"--link"_s, u"bluetooth"_s,
                                               u"--link-latency"_s, u"12"_s, u"--link-bandwidth"_s, u"5000"_s,
                                               u"--fault"_s, faults[0], u"--fault"_s, faults[1], u"--"_s}
                                   + printSimEnvironment);
    const QMap<int, QStringList> nodes = shellReports(run.out);
    if (run.exitCode != 0 || nodes.keys() != QList<int>{0, 1, 2})
        QFAIL(qPrintable(run.dump()));
    const QRegularExpression root(u"^sim://mmpi-%1-[0-9a-f]{8}$"_s.arg(run.pid));
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
        const QStringList &node = it.value();
        QCOMPARE(node[0], QString::number(it.key()));
        QCOMPARE(node[1], u"sim"_s);
        QCOMPARE(node[2], nodes.first()[2]);
        QVERIFY2(root.match(node[2]).hasMatch(), qPrintable(node[2]));
        QJsonParseError error;
        const QJsonObject options = QJsonDocument::fromJson(node[3].toUtf8(), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(node[3]));
        const QJsonObject expected{{u"link"_s, u"bluetooth"_s},
                                   {u"latencyMs"_s, 12},
                                   {u"bandwidth"_s, 5000},
                                   {u"faults"_s, QJsonArray::fromStringList(faults)},
                                   {u"rank"_s, it.key()},
                                   {u"worldSize"_s, 3}};
        QCOMPARE(options, expected);
    }
}

void TestMmpirun::transportOptionsOnlyForSim()
{
    const QProcessEnvironment env = systemEnvironmentWith({{u"MMPI_TRANSPORT_OPTIONS"_s, uR"({"link":"wifi"})"_s}});
    for (const QString &transport : {u"local"_s, u"tcp"_s}) {
        const ProcessRun run = mmpirun(QStringList{u"-n"_s, u"2"_s, u"--transport"_s, transport, u"--"_s}
                                           + printSimEnvironment, env);
        const QMap<int, QStringList> nodes = shellReports(run.out);
        if (run.exitCode != 0 || nodes.size() != 2)
            QFAIL(qPrintable(run.dump()));
        for (const QStringList &node : nodes)
            QCOMPARE(node[3], QString());
    }
    // Without --link the nodes get no profile and the plugin's default applies.
    const ProcessRun run =
        mmpirun(QStringList{u"-n"_s, u"1"_s, u"--transport"_s, u"sim"_s, u"--"_s} + printSimEnvironment, env);
    const QMap<int, QStringList> nodes = shellReports(run.out);
    if (run.exitCode != 0 || nodes.size() != 1)
        QFAIL(qPrintable(run.dump()));
    QCOMPARE(nodes[0][3], uR"({"rank":0,"worldSize":1})"_s);
}

namespace {

// Each node's root and listen addresses, printed by a shell, by rank.
QMap<int, QStringList> addressReports(const QString &out)
{
    static const QRegularExpression line(uR"(^\[(\d+)\] rank=(\d*) root=(\S*) listen=(\S*)$)"_s,
                                         QRegularExpression::MultilineOption);
    QMap<int, QStringList> result;
    for (auto it = line.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        result.insert(m.captured(1).toInt(), {m.captured(2), m.captured(3), m.captured(4)});
    }
    return result;
}

const QStringList printAddresses{
    u"/bin/sh"_s, u"-c"_s,
    uR"(printf 'rank=%s root=%s listen=%s\n' "$MMPI_RANK" "$MMPI_ROOT_ADDRESS" "$MMPI_LISTEN_ADDRESS")"_s};

} // namespace

void TestMmpirun::rankAddresses_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<QStringList>("hosts"); // as they appear in tcp:// addresses, by rank
    QTest::addRow("ipv4") << u"10.77.0.{rank+1}"_s << QStringList{u"10.77.0.1"_s, u"10.77.0.2"_s, u"10.77.0.3"_s};
    QTest::addRow("ipv6") << u"fd00::{rank+10}"_s << QStringList{u"[fd00::10]"_s, u"[fd00::11]"_s, u"[fd00::12]"_s};
    QTest::addRow("one for all") << u"127.0.0.9"_s << QStringList{u"127.0.0.9"_s, u"127.0.0.9"_s, u"127.0.0.9"_s};
}

// The root listens at its address on a free port; every other rank listens
// at its own address on a port of its choosing, and says so in MMPI_LISTEN_ADDRESS.
void TestMmpirun::rankAddresses()
{
    QFETCH(QString, address);
    QFETCH(QStringList, hosts);
    const ProcessRun run = mmpirun(QStringList{u"-n"_s, u"3"_s, u"--transport"_s, u"tcp"_s, u"--rank-address"_s,
                                               address, u"--"_s} + printAddresses);
    const QMap<int, QStringList> nodes = addressReports(run.out);
    if (run.exitCode != 0 || nodes.keys() != QList<int>{0, 1, 2})
        QFAIL(qPrintable(run.dump()));
    const QRegularExpression root(u"^tcp://%1:(\\d+)$"_s.arg(QRegularExpression::escape(hosts[0])));
    const auto match = root.match(nodes[0][1]);
    QVERIFY2(match.hasMatch() && match.captured(1).toInt() > 0, qPrintable(nodes[0][1]));
    for (int rank = 0; rank < 3; ++rank) {
        QCOMPARE(nodes[rank][0], QString::number(rank));
        QCOMPARE(nodes[rank][1], nodes[0][1]);
        QCOMPARE(nodes[rank][2], rank == 0 ? nodes[0][1] : u"tcp://%1:0"_s.arg(hosts[rank]));
    }
}

void TestMmpirun::listenAddressOnlyWithRankAddress()
{
    const QProcessEnvironment env = systemEnvironmentWith({{u"MMPI_LISTEN_ADDRESS"_s, u"tcp://10.9.9.9:0"_s}});
    const ProcessRun run =
        mmpirun(QStringList{u"-n"_s, u"2"_s, u"--transport"_s, u"tcp"_s, u"--"_s} + printAddresses, env);
    const QMap<int, QStringList> nodes = addressReports(run.out);
    if (run.exitCode != 0 || nodes.size() != 2)
        QFAIL(qPrintable(run.dump()));
    for (const QStringList &node : nodes) {
        QVERIFY2(node[1].startsWith(u"tcp://127.0.0.1:"_s), qPrintable(node[1]));
        QCOMPARE(node[2], QString());
    }
}

// The prefix, with each rank's number filled in, runs first and starts the
// program with its arguments; the node is still the one mmpirun watches.
void TestMmpirun::rankPrefixStartsEveryNode()
{
    // --keep-going: rank 2's failure must not stop the others before they print.
    const ProcessRun run = mmpirun(QStringList{u"-n"_s, u"3"_s, u"--keep-going"_s, u"--rank-prefix"_s,
                                               u"env \"MMPIRUN_TEST_WORD=ns {rank}\" MMPIRUN_TEST_OFFSET={rank+10}"_s,
                                               u"--"_s, u"/bin/sh"_s, u"-c"_s,
                                               uR"(echo "rank=$MMPI_RANK word=$MMPIRUN_TEST_WORD offset=$MMPIRUN_TEST_OFFSET args=$0,$1" && exit $((MMPI_RANK == 2 ? 7 : 0)))"_s,
                                               u"first"_s, u"second"_s});
    QVERIFY2(run.exitCode == 7, qPrintable(run.dump()));
    for (int rank = 0; rank < 3; ++rank) {
        const QString line = u"[%1] rank=%1 word=ns %1 offset=%2 args=first,second"_s.arg(rank).arg(rank + 10);
        QVERIFY2(run.out.contains(line), qPrintable(line + u"\n"_s + run.dump()));
    }
    QVERIFY2(run.err.contains(u"mmpirun: node 2 exited with status 7"_s), qPrintable(run.dump()));
}

void TestMmpirun::prefixedLinesNeverInterleave()
{
    const int nodes = 4;
    const int lines = 400;
    const ProcessRun run = mmpirun(probeArgs(nodes, {}, {u"--lines"_s, QString::number(lines)}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump().left(2000)));

    static const QRegularExpression line(uR"(^\[(\d+)\] rank=(\d+) stream=(out|err) line=(\d+) ([a-z]+)$)"_s);
    for (const auto &[text, stream] : {std::pair{run.out, u"out"_s}, std::pair{run.err, u"err"_s}}) {
        QList<int> next(nodes, 0);
        const QStringList all = text.split(u'\n', Qt::SkipEmptyParts);
        for (const QString &l : all) {
            if (l.contains(u" size="_s))
                continue; // the environment report
            const auto m = line.match(l);
            QVERIFY2(m.hasMatch(), qPrintable(u"mixed line on %1: '%2'"_s.arg(stream, l)));
            const int rank = m.captured(1).toInt();
            QCOMPARE(m.captured(2).toInt(), rank);
            QCOMPARE(m.captured(3), stream);
            QCOMPARE(m.captured(4).toInt(), next[rank]++);
            QCOMPARE(m.captured(5), QString(120, QChar(u'a' + rank)));
        }
        QCOMPARE(next, QList<int>(nodes, lines));
    }
    QVERIFY(run.out.endsWith(u'\n'));
}

void TestMmpirun::partialLastLineIsFlushed()
{
    const ProcessRun run = mmpirun(probeArgs(3, {}, {u"--partial-line"_s}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QStringList lines = run.out.split(u'\n');
    for (int rank = 0; rank < 3; ++rank)
        QVERIFY2(lines.contains(u"[%1] partial-%1"_s.arg(rank)), qPrintable(run.out));
    QVERIFY(run.out.endsWith(u'\n'));
}

void TestMmpirun::noPrefix()
{
    const ProcessRun run = mmpirun(probeArgs(2, {u"--no-prefix"_s}, {u"--lines"_s, u"3"_s, u"--partial-line"_s}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(!run.out.contains(u'['), qPrintable(run.out));
    QVERIFY2(!run.err.contains(u'['), qPrintable(run.err));
    const QStringList lines = run.out.split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2 * (1 + 3 + 1));
    QVERIFY(lines.contains(u"partial-1"_s));
    QVERIFY(lines.filter(QRegularExpression(u"^rank=0 size=2 "_s)).size() == 1);
}

namespace {

// The CPUs of a Linux process's Cpus_allowed_list ("0-2,5"), in order.
QList<int> cpuList(const QString &text)
{
    QList<int> cpus;
    for (const QString &range : text.split(u',', Qt::SkipEmptyParts)) {
        const QStringList ends = range.split(u'-');
        for (int cpu = ends.first().toInt(); cpu <= ends.last().toInt(); ++cpu)
            cpus.append(cpu);
    }
    return cpus;
}

// The CPUs this test may run on (and mmpirun with it); empty where the
// system cannot say.
QList<int> cpusOfThisProcess()
{
    QFile status(u"/proc/self/status"_s);
    if (!status.open(QIODevice::ReadOnly))
        return {};
    static const QRegularExpression allowed(uR"(^Cpus_allowed_list:\s*(\S+)$)"_s, QRegularExpression::MultilineOption);
    return cpuList(allowed.match(QString::fromLatin1(status.readAll())).captured(1));
}

// What each node of an mmpirun job with `options` may run on, by rank.
QMap<int, QList<int>> cpusOfNodes(int nodes, const QStringList &options)
{
    const QStringList program{
        u"/bin/sh"_s, u"-c"_s,
        uR"sh(printf 'cpus=%s\n' "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)")sh"_s};
    const ProcessRun run = mmpirun(QStringList{u"-n"_s, QString::number(nodes)} + options + QStringList{u"--"_s} + program);
    static const QRegularExpression line(uR"(^\[(\d+)\] cpus=(\S+)$)"_s, QRegularExpression::MultilineOption);
    QMap<int, QList<int>> allowed;
    for (auto it = line.globalMatch(run.out); it.hasNext();) {
        const auto m = it.next();
        allowed.insert(m.captured(1).toInt(), cpuList(m.captured(2)));
    }
    return allowed;
}

} // namespace

// As Open MPI does, a node per CPU while there are enough CPUs; nodes that
// are a multiple of the CPUs in turn, the same number on each; else none.
void TestMmpirun::nodesAreBoundToCpus()
{
#ifndef Q_OS_LINUX
    QSKIP("CPU binding is implemented on Linux");
#else
    const QList<int> mine = cpusOfThisProcess();
    QVERIFY(!mine.isEmpty());
    if (mine.size() < 2 || mine.size() > 16)
        QSKIP("needs 2 to 16 CPUs to run on (mmpirun inherits this test's)");
    const auto everywhere = [&](int nodes) {
        QMap<int, QList<int>> expected;
        for (int rank = 0; rank < nodes; ++rank)
            expected.insert(rank, mine);
        return expected;
    };
    const auto oneEach = [&](int nodes) {
        QMap<int, QList<int>> expected;
        for (int rank = 0; rank < nodes; ++rank)
            expected.insert(rank, {mine.at(rank % mine.size())});
        return expected;
    };
    const auto check = [&](int nodes, const QStringList &options, const QMap<int, QList<int>> &expected) {
        const QMap<int, QList<int>> got = cpusOfNodes(nodes, options);
        if (got != expected)
            return u"%1 nodes %2: bound to %3"_s.arg(nodes).arg(options.join(u' ')).arg(QDebug::toString(got));
        return QString();
    };
    // Given as many nodes as CPUs: each on its own
    QCOMPARE(check(2, {}, oneEach(2)), QString());
    QCOMPARE(check(int(mine.size()), {}, oneEach(int(mine.size()))), QString());
    // Twice as many nodes as CPUs: two on each, in turn
    QCOMPARE(check(2 * int(mine.size()), {}, oneEach(2 * int(mine.size()))), QString());
    // More nodes than CPUs but not a multiple, or --bind-to none: wherever the system puts them
    QCOMPARE(check(int(mine.size()) + 1, {}, everywhere(int(mine.size()) + 1)), QString());
    QCOMPARE(check(2, {u"--bind-to"_s, u"none"_s}, everywhere(2)), QString());
    // A single node is left alone; --bind-to core binds even more nodes than CPUs, in turn
    QCOMPARE(check(1, {}, everywhere(1)), QString());
    QCOMPARE(check(int(mine.size()) + 1, {u"--bind-to"_s, u"core"_s}, oneEach(int(mine.size()) + 1)), QString());
#endif
}

void TestMmpirun::successIsSilent()
{
    const ProcessRun run = mmpirun(probeArgs(4, {}, {}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
    QCOMPARE(reports(run.out).size(), 4);
}

void TestMmpirun::failingNodeStopsTheOthers()
{
    const ProcessRun run = mmpirun(probeArgs(3, {}, {u"--exit-code-for-rank"_s, u"1"_s, u"3"_s, u"--fail-after-ms"_s,
                                                     u"500"_s, u"--sleep-ms"_s, u"20000"_s}));
    QVERIFY2(run.exitCode == 3, qPrintable(run.dump()));
    QVERIFY2(run.elapsedMs < 10000, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"mmpirun: node 1 exited with status 3; stopping the other nodes "
                              "(use --keep-going to let them finish)"_s),
             qPrintable(run.err));
    // The summary names what happened to every node.
    QVERIFY2(run.err.contains(u"mmpirun: job failed (exit status 3):"_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"mmpirun:   node 1: exited with status 3"_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"mmpirun:   nodes 0, 2: stopped by mmpirun"_s), qPrintable(run.err));
    QVERIFY(!run.out.contains(u"done"_s));
    // Every node that got as far as reporting is gone with mmpirun.
    const QList<Report> all = reports(run.out);
    QVERIFY2(!all.isEmpty(), qPrintable(run.dump()));
    QVERIFY(allGone(all));
}

void TestMmpirun::keepGoingLetsTheOthersFinish()
{
    const ProcessRun run = mmpirun(
        probeArgs(3, {u"--keep-going"_s}, {u"--exit-code-for-rank"_s, u"1"_s, u"3"_s, u"--sleep-ms"_s, u"1500"_s}));
    QVERIFY2(run.exitCode == 3, qPrintable(run.dump()));
    QVERIFY2(run.elapsedMs >= 1400, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"mmpirun: node 1 exited with status 3 (--keep-going: the other nodes continue)"_s),
             qPrintable(run.err));
    QVERIFY2(run.out.contains(u"[0] rank=0 done\n"_s) && run.out.contains(u"[2] rank=2 done\n"_s),
             qPrintable(run.out));
    QVERIFY2(run.err.contains(u"mmpirun:   nodes 0, 2: exited with status 0"_s), qPrintable(run.err));
}

void TestMmpirun::crashCountsAsSignal()
{
    const ProcessRun run = mmpirun(probeArgs(2, {}, {u"--crash-rank"_s, u"1"_s, u"--fail-after-ms"_s, u"300"_s,
                                                     u"--sleep-ms"_s, u"20000"_s}));
    QVERIFY2(run.exitCode == 128 + SIGABRT, qPrintable(run.dump()));
    QVERIFY2(run.elapsedMs < 10000, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"mmpirun: node 1 crashed with signal %1 (SIGABRT); stopping the other nodes"_s.arg(SIGABRT)),
             qPrintable(run.err));
    QVERIFY(allGone(reports(run.out)));
}

// A crashed node, and one stopped by mmpirun, cannot remove the socket its
// transport listened on; mmpirun does, and leaves other files alone.
void TestMmpirun::socketsOfFinishedNodesAreRemoved()
{
    QTemporaryDir temp;
    QVERIFY(temp.isValid());
    QFile unrelated(temp.filePath(u"mmpi-1-not-a-socket"_s));
    QVERIFY(unrelated.open(QIODevice::WriteOnly));
    unrelated.close();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"TMPDIR"_s, temp.path());
    const ProcessRun run = mmpirun(probeArgs(2, {}, {u"--leave-socket"_s, u"--crash-rank"_s, u"1"_s,
                                                     u"--fail-after-ms"_s, u"300"_s, u"--sleep-ms"_s, u"20000"_s}),
                                   env);
    QVERIFY2(run.exitCode == 128 + SIGABRT, qPrintable(run.dump()));
    QVERIFY2(!run.err.contains(u"cannot"_s), qPrintable(run.err)); // both probes made their socket
    const QStringList left = QDir(temp.path()).entryList(QDir::System | QDir::Files | QDir::Hidden);
    QCOMPARE(left, QStringList{u"mmpi-1-not-a-socket"_s});
}

void TestMmpirun::nodesIgnoringTerminateAreKilled()
{
    const ProcessRun run = mmpirun(probeArgs(
        2, {}, {u"--exit-code-for-rank"_s, u"1"_s, u"5"_s, u"--fail-after-ms"_s, u"1000"_s, u"--ignore-term"_s,
                u"--sleep-ms"_s, u"20000"_s}));
    QVERIFY2(run.exitCode == 5, qPrintable(run.dump()));
    // Three seconds of grace, then SIGKILL.
    QVERIFY2(run.elapsedMs >= 2900 && run.elapsedMs < 10000, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"node(s) 0 still running 3 s after SIGTERM; killing them"_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"mmpirun:   node 0: killed by mmpirun after the 3 s grace period"_s), qPrintable(run.err));
    QVERIFY(allGone(reports(run.out)));
}

void TestMmpirun::timeoutStopsTheJob()
{
    const ProcessRun run = mmpirun(probeArgs(3, {u"--timeout"_s, u"1"_s}, {u"--sleep-ms"_s, u"20000"_s}));
    QVERIFY2(run.exitCode == 124, qPrintable(run.dump()));
    QVERIFY2(run.elapsedMs >= 900 && run.elapsedMs < 10000, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"mmpirun: timeout after 1 s; nodes still running: 0-2\n"_s), qPrintable(run.err));
    QVERIFY2(run.err.contains(u"mmpirun: job timed out (exit status 124):"_s), qPrintable(run.err));
    const QList<Report> all = reports(run.out);
    QCOMPARE(all.size(), 3);
    QVERIFY(allGone(all));
}

void TestMmpirun::signalsAreForwarded_data()
{
    QTest::addColumn<int>("signal");
    QTest::addRow("SIGINT") << int(SIGINT);
    QTest::addRow("SIGTERM") << int(SIGTERM);
}

void TestMmpirun::signalsAreForwarded()
{
    QFETCH(int, signal);
    QProcess process;
    process.start(QStringLiteral(MMPIRUN_PATH), probeArgs(3, {}, {u"--sleep-ms"_s, u"20000"_s}));
    QVERIFY(process.waitForStarted(10000));
    // Wait until every node runs, then signal mmpirun only (not its process group).
    QByteArray out;
    QDeadlineTimer deadline(15000);
    while (reports(QString::fromUtf8(out)).size() < 3 && !deadline.hasExpired()) {
        process.waitForReadyRead(int(qMax<qint64>(1, deadline.remainingTime())));
        out += process.readAllStandardOutput();
    }
    QCOMPARE(reports(QString::fromUtf8(out)).size(), 3);
    QCOMPARE(::kill(pid_t(process.processId()), signal), 0);
    const ProcessRun run = finishProcess(process, 10000);
    QVERIFY2(run.exitCode == 128 + signal, qPrintable(run.dump()));
    QVERIFY2(run.elapsedMs < 5000, qPrintable(run.dump()));
    const QString &err = run.err;
    const QString name = signal == SIGINT ? u"SIGINT"_s : u"SIGTERM"_s;
    QVERIFY2(err.contains(u"mmpirun: received %1; stopping the nodes"_s.arg(name)), qPrintable(err));
    QVERIFY2(err.contains(u"mmpirun:   nodes 0-2: stopped by mmpirun"_s), qPrintable(err));
    QVERIFY(allGone(reports(QString::fromUtf8(out) + run.out)));
}

namespace {

QString killedLine(int rank, const QString &event)
{
    return u"mmpirun: node %1 crashed with signal 9 (SIGKILL), sent by --kill '%2'"_s.arg(rank).arg(event);
}

} // namespace

// Killed from outside on the local transport, rank 2 is lost to the others'
// world as a crashed device would be: the survivors shrink and finish.
void TestMmpirun::killedRankCrashesWhileTheOthersRunOn()
{
    const ProcessRun run = mmpirun({u"-n"_s, u"4"_s, u"--keep-going"_s, u"--kill"_s, u"rank 2 at 1000ms"_s, ftApp,
                                    u"--policy"_s, u"shrink"_s, u"--iterations"_s, u"2000"_s, u"--pause-ms"_s, u"1"_s});
    QVERIFY2(run.exitCode == 128 + SIGKILL, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(killedLine(2, u"rank 2 at 1000ms"_s)
                              + u" (--keep-going: the other nodes continue)\n"_s),
             qPrintable(run.dump()));
    QVERIFY2(run.lines(2, u"event=ready"_s).size() == 1 && run.lines(2, u"event=done"_s).isEmpty(),
             qPrintable(run.dump()));
    for (int rank : {0, 1, 3}) {
        QVERIFY2(run.lines(rank, u"event=reconfigured policy=Shrink failed=2 size=3"_s).size() == 1,
                 qPrintable(run.dump()));
        QVERIFY2(run.lines(rank, u"event=done iterations=2000 size=3"_s).size() == 1, qPrintable(run.dump()));
    }
}

// Two timers from one clock: the second kill is not lost behind the first
// one's crash report.
void TestMmpirun::killsMillisecondsApartBothHappen()
{
    const ProcessRun run = mmpirun(probeArgs(4,
                                             {u"--keep-going"_s, u"--kill"_s, u"rank 2 at 1000ms"_s, u"--kill"_s,
                                              u"rank 3 at 1005ms"_s},
                                             {u"--sleep-ms"_s, u"2500"_s}));
    QVERIFY2(run.exitCode == 128 + SIGKILL, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(killedLine(2, u"rank 2 at 1000ms"_s)), qPrintable(run.dump()));
    QVERIFY2(run.err.contains(killedLine(3, u"rank 3 at 1005ms"_s)), qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] rank=0 done\n"_s) && run.out.contains(u"[1] rank=1 done\n"_s),
             qPrintable(run.dump()));
    QVERIFY2(!run.out.contains(u"[2] rank=2 done"_s) && !run.out.contains(u"[3] rank=3 done"_s), qPrintable(run.dump()));
    QCOMPARE(reports(run.out).size(), 4);
    QVERIFY(allGone(reports(run.out)));
}

// A crash like any other: --respawn starts a replacement, which --kill
// leaves alone.
void TestMmpirun::killedRankIsRespawned()
{
    const ProcessRun run = mmpirun(probeArgs(3, {u"--respawn"_s, u"1"_s, u"--kill"_s, u"rank 1 at 1000ms"_s},
                                             {u"--sleep-ms"_s, u"1500"_s}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(run.err.contains(killedLine(1, u"rank 1 at 1000ms"_s) + u"; starting a replacement in rank 1"_s),
             qPrintable(run.dump()));
    QList<qint64> pids;
    for (const Report &r : reports(run.out))
        if (r.rank == 1)
            pids << r.pid;
    QVERIFY2(pids.size() == 2 && pids[0] != pids[1], qPrintable(run.dump()));
    QVERIFY2(run.out.count(u"[1] rank=1 done\n"_s) == 1, qPrintable(run.dump()));
}

void TestMmpirun::killOfAnEndedRankIsSkipped()
{
    const ProcessRun run = mmpirun(probeArgs(3, {u"--kill"_s, u"rank 1 at 1000ms"_s},
                                             {u"--exit-code-for-rank"_s, u"1"_s, u"0"_s, u"--sleep-ms"_s, u"2000"_s}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(run.err == u"mmpirun: --kill 'rank 1 at 1000ms' skipped: node 1 is not running (it exited with status 0)\n"_s,
             qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] rank=0 done\n"_s) && run.out.contains(u"[2] rank=2 done\n"_s),
             qPrintable(run.dump()));
}

QTEST_GUILESS_MAIN(TestMmpirun)
#include "tst_mmpirun.moc"
