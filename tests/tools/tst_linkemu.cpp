// tst_linkemu: mmpi-linkemu's radios measured from inside its namespaces with
// linkemu_probe: a UDP round trip takes twice the one-way latency (plus the
// frames' airtime), a bulk TCP transfer runs at the profile's rate less the
// TCP/IP headers, two senders on one node share its radio, --each runs a
// command in every namespace, and no namespace (nor a process in one) is
// left after the command or the emulator is killed; --control adds a network
// beside the radios that nothing delays, gone with the emulator. Only the emulator's own
// addresses (10.77.0.0/24 inside its namespaces) are used. Exits 77 (CTest:
// skipped), saying why, where the emulator cannot run: not root, no TUN.
#include "processrun.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>

#include <csignal>

#include <unistd.h>

namespace {

using namespace mmpi::test;
using namespace Qt::StringLiterals;

const QString emulator = QStringLiteral(MMPI_LINKEMU_PATH);
const QString probe = QStringLiteral(LINKEMU_PROBE_PATH);
const QString mmpirun = QStringLiteral(MMPIRUN_PATH);
const QString ring = QStringLiteral(MMPI_RING_PATH);
const QString bench = QStringLiteral(MMPI_BENCH_PATH);

// The bluetooth profile: 30 ms one way, 90000 bytes/s on the wire.
constexpr double LatencyS = 0.030;
constexpr double WireRate = 90000;
// A full TCP segment at MTU 1500: 20 bytes of IP, 20 of TCP and 12 of
// timestamps around 1448 of payload.
constexpr double PayloadRate = WireRate * 1448.0 / 1500.0;

ProcessRun runEmulated(const QStringList &options, const QString &script, int timeoutMs = 25000)
{
    return runProcess(emulator, options + QStringList{u"--"_s, u"sh"_s, u"-c"_s, script}, {.timeoutMs = timeoutMs});
}

// "ip netns exec <node's namespace> linkemu_probe ..." for a script.
QString inNode(int node, const QString &args)
{
    return u"ip netns exec \"$MMPI_LINKEMU_NS_%1\" %2 %3"_s.arg(node).arg(probe, args);
}

// The host's links of an emulator's control network ("mec<pid>b", "mec<pid>v<i>").
QStringList controlLinksOf(qint64 emulatorPid)
{
    return QDir(u"/sys/class/net"_s).entryList({u"mec%1[bv]*"_s.arg(emulatorPid)}, QDir::AllEntries | QDir::System);
}

QStringList namespacesOf(qint64 emulatorPid)
{
    return QDir(u"/run/netns"_s).entryList({u"mmpi-emu-%1-*"_s.arg(emulatorPid)}, QDir::Files | QDir::System);
}

bool processGone(qint64 pid)
{
    return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

// Bounded wait for `done`, polling every 50 ms.
template<typename Done> bool within(int ms, Done done)
{
    QElapsedTimer clock;
    clock.start();
    while (!done() && clock.elapsed() < ms)
        QTest::qSleep(50);
    return done();
}

// The command's first line, "ready <its pid> <pid inside a namespace>",
// read within 15 s.
QStringList readyLine(QProcess &job)
{
    QElapsedTimer clock;
    clock.start();
    while (!job.canReadLine() && job.state() == QProcess::Running && clock.elapsed() < 15000)
        job.waitForReadyRead(100);
    return QString::fromUtf8(job.readLine()).trimmed().split(u' ');
}

struct Flow
{
    double bytes = 0, firstS = 0, lastS = 0;
};

QList<Flow> flows(const QString &out)
{
    static const QRegularExpression line(uR"(flow \d+: bytes=(\d+) first_ns=(\d+) last_ns=(\d+))"_s);
    QList<Flow> found;
    for (auto it = line.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        found.append({m.captured(1).toDouble(), m.captured(2).toDouble() / 1e9, m.captured(3).toDouble() / 1e9});
    }
    return found;
}

} // namespace

class TestLinkEmu : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void usageErrorsNameTheOption();
    void skipsWhereItIsNotRoot();
    void refusedRealtimeIsAWarning();
    void roundTripIsTwiceTheLatency();
    void bulkTransferRunsAtTheProfileRate();
    void twoSendersShareOneRadio();
    void eachRunsTheCommandInEveryNamespace();
    void mmpirunRunsTheTcpTransportAcrossIt();
    void freshWorldLearnsItsRadio();
    void controlNetworkBypassesTheRadios();
    void noNamespaceLeftAfterTheCommandIsKilled();
    void noNamespaceLeftAfterTheEmulatorIsKilled_data();
    void noNamespaceLeftAfterTheEmulatorIsKilled();
};

void TestLinkEmu::usageErrorsNameTheOption()
{
    const ProcessRun unknown = runProcess(emulator, {u"--profile"_s, u"blue"_s, u"--"_s, u"true"_s});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains(u"--profile: unknown profile 'blue' (known: bluetooth, bluetooth-edr, wifi)"_s),
             qPrintable(unknown.dump()));
    const ProcessRun rate = runProcess(emulator, {u"--rate"_s, u"fast"_s, u"--"_s, u"true"_s});
    QCOMPARE(rate.exitCode, 2);
    QVERIFY2(rate.err.contains(u"--rate: 'fast' is not bytes per second"_s), qPrintable(rate.dump()));
    const ProcessRun noCommand = runProcess(emulator, {u"--nodes"_s, u"2"_s});
    QCOMPARE(noCommand.exitCode, 2);
    QVERIFY2(noCommand.err.contains(u"no command"_s), qPrintable(noCommand.dump()));
}

void TestLinkEmu::skipsWhereItIsNotRoot()
{
    // Given the emulator started as nobody, then it refuses with 77 and says why.
    const ProcessRun run = runProcess(u"setpriv"_s, {u"--reuid=65534"_s, u"--regid=65534"_s, u"--clear-groups"_s,
                                                     emulator, u"--"_s, u"true"_s});
    QCOMPARE(run.exitCode, 77);
    QVERIFY2(run.err.contains(u"skipped: network namespaces and TUN devices need root"_s), qPrintable(run.dump()));
}

void TestLinkEmu::refusedRealtimeIsAWarning()
{
    // Given root without CAP_SYS_NICE (and no RLIMIT_RTPRIO), then the switch
    // runs at normal priority, says so, and the command still runs.
    const ProcessRun run = runProcess(u"setpriv"_s, {u"--bounding-set=-sys_nice"_s, emulator, u"--nodes"_s, u"1"_s,
                                                     u"--"_s, u"sh"_s, u"-c"_s, u"echo ran"_s});
    QVERIFY2(run.exitCode == 0 && run.out.contains(u"ran"_s), qPrintable(run.dump()));
    QVERIFY2(run.err.contains(u"warning: the switch runs without SCHED_FIFO"_s), qPrintable(run.dump()));
}

void TestLinkEmu::roundTripIsTwiceTheLatency()
{
    // 64 bytes of UDP are 92 on the wire: 1.0 ms of airtime each way.
    const ProcessRun run = runEmulated({u"--nodes"_s, u"2"_s, u"--profile"_s, u"bluetooth"_s},
                                       inNode(1, u"udp-echo --port 7000 --seconds 8 &"_s) + u"\n"_s
                                           + inNode(0, u"udp-ping --to $MMPI_LINKEMU_ADDR_1 --port 7000 --count 20"_s)
                                           + u"\nstatus=$?; kill $!; exit $status"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    static const QRegularExpression rtt(u"rtt_us median=(\\d+)"_s);
    const auto m = rtt.match(run.out);
    QVERIFY2(m.hasMatch(), qPrintable(run.dump()));
    const double measured = m.captured(1).toDouble() / 1e6;
    const double expected = 2 * (LatencyS + 92 / WireRate);
    qInfo("round trip %.1f ms, expected %.1f ms", measured * 1e3, expected * 1e3);
    QVERIFY2(measured > 0.85 * expected && measured < 1.15 * expected, qPrintable(run.dump()));
}

void TestLinkEmu::bulkTransferRunsAtTheProfileRate()
{
    // 300 kB: 3.5 s at 87 kB/s of payload, long enough for a window's
    // ramp-up and the queue's drops to be a few per cent at most.
    const ProcessRun run = runEmulated(
        {u"--nodes"_s, u"2"_s, u"--profile"_s, u"bluetooth"_s},
        inNode(1, u"tcp-sink --port 7001 --seconds 20 &"_s) + u"\n"_s
            + inNode(0, u"tcp-send --to $MMPI_LINKEMU_ADDR_1 --port 7001 --bytes 300000"_s) + u"\nwait $!"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QList<Flow> found = flows(run.out);
    QVERIFY2(found.size() == 1 && found[0].bytes == 300000, qPrintable(run.dump()));
    const double rate = found[0].bytes / (found[0].lastS - found[0].firstS);
    qInfo("payload rate %.0f bytes/s, profile's %.0f (%.3f)", rate, PayloadRate, rate / PayloadRate);
    QVERIFY2(rate > 0.85 * PayloadRate && rate < 1.05 * PayloadRate, qPrintable(run.dump()));
    // The write returned long before the radio could have carried it: a
    // good part waited in the sender's socket, where a transport can see it
    // ("the socket took it" is not "it has left").
    static const QRegularExpression unsent(u"unsent_after_write=(\\d+)"_s);
    const auto m = unsent.match(run.out);
    QVERIFY2(m.hasMatch(), qPrintable(run.dump()));
    qInfo("%s bytes of 300000 not sent yet when the write returned", qPrintable(m.captured(1)));
    QVERIFY2(m.captured(1).toInt() > 30000, qPrintable(run.dump()));
}

void TestLinkEmu::twoSendersShareOneRadio()
{
    // Node 0 sends to nodes 1 and 2 at once: one radio, so the two flows
    // together get its rate and neither gets much more than half of it
    // (two radios would give each the whole rate).
    const QString send = u"tcp-send --to $MMPI_LINKEMU_ADDR_%1 --port 7002 --bytes 150000 &"_s;
    const ProcessRun run = runEmulated(
        {u"--nodes"_s, u"3"_s, u"--profile"_s, u"bluetooth"_s},
        inNode(1, u"tcp-sink --port 7002 --seconds 20 &"_s) + u"\n"_s + inNode(2, u"tcp-sink --port 7002 --seconds 20 &"_s)
            + u"\n"_s + inNode(0, send.arg(1)) + u"\n"_s + inNode(0, send.arg(2)) + u"\nwait"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QList<Flow> found = flows(run.out);
    QVERIFY2(found.size() == 2 && found[0].bytes == 150000 && found[1].bytes == 150000, qPrintable(run.dump()));
    const double span = std::max(found[0].lastS, found[1].lastS) - std::min(found[0].firstS, found[1].firstS);
    const double together = (found[0].bytes + found[1].bytes) / span;
    qInfo("together %.0f bytes/s (%.3f of the profile's payload rate)", together, together / PayloadRate);
    QVERIFY2(together > 0.85 * PayloadRate && together < 1.05 * PayloadRate, qPrintable(run.dump()));
    for (const Flow &flow : found) {
        const double alone = flow.bytes / (flow.lastS - flow.firstS);
        qInfo("one flow %.0f bytes/s (%.3f of the profile's payload rate)", alone, alone / PayloadRate);
        QVERIFY2(alone < 0.7 * PayloadRate, qPrintable(run.dump()));
    }
}

void TestLinkEmu::eachRunsTheCommandInEveryNamespace()
{
    // Each node's command sees only its own radio, with its own address.
    const ProcessRun run = runProcess(emulator, {u"--nodes"_s, u"3"_s, u"--each"_s, u"--"_s, u"sh"_s, u"-c"_s,
                                                 u"echo node={node} addr={addr} env=$MMPI_LINKEMU_NODE "
                                                 "$(ip -o -4 addr show dev radio0 | awk '{print $4}')"_s},
                                      {.timeoutMs = 20000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    for (int node = 0; node < 3; ++node) {
        const QString line = u"node=%1 addr=10.77.0.%2 env=%1 10.77.0.%2/24"_s.arg(node).arg(node + 1);
        QVERIFY2(run.out.contains(line), qPrintable(run.dump()));
    }
    // And the largest status of them is the emulator's.
    const ProcessRun failing = runProcess(emulator, {u"--nodes"_s, u"2"_s, u"--each"_s, u"--"_s, u"sh"_s, u"-c"_s,
                                                     u"exit $((3 + {node}))"_s},
                                          {.timeoutMs = 20000});
    QCOMPARE(failing.exitCode, 4);
}

void TestLinkEmu::mmpirunRunsTheTcpTransportAcrossIt()
{
    // The way docs/guide/linkemu.md says: each rank in its namespace, at its
    // address, over the real tcp transport. A hop of the token then takes
    // the one-way latency and its frame's airtime (over loopback: well
    // under a millisecond).
    const QString script = u"exec %1 -n 3 --transport tcp --timeout 30 "
                           "--rank-prefix \"ip netns exec ${MMPI_LINKEMU_PREFIX}{rank}\" "
                           "--rank-address \"${MMPI_LINKEMU_SUBNET}.{rank+1}\" %2 --rounds 2"_s.arg(mmpirun, ring);
    const ProcessRun run = runEmulated({u"--nodes"_s, u"3"_s, u"--profile"_s, u"bluetooth"_s}, script, 40000);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] World of 3 node(s) over tcp formed"_s), qPrintable(run.dump()));
    static const QRegularExpression hops(u"\\[0\\] 6 hops in [0-9.]+ ms \\(([0-9.]+) ms per hop\\)"_s);
    const auto m = hops.match(run.out);
    QVERIFY2(m.hasMatch(), qPrintable(run.dump()));
    const double perHop = m.captured(1).toDouble();
    qInfo("%.1f ms per hop of the token (one-way latency %.0f ms)", perHop, LatencyS * 1e3);
    QVERIFY2(perHop >= LatencyS * 1e3 && perHop < 2 * LatencyS * 1e3, qPrintable(run.dump()));
}

void TestLinkEmu::freshWorldLearnsItsRadio()
{
    // A world that sends nothing still learns each link's latency (its
    // first heartbeats) and its radio's rate (one rate probe per node, timed
    // where it arrives), so its first broadcasts plan with the radio's
    // numbers and not the medium's (tcp: Wi-Fi's 2 ms and 5 MB/s).
    const QString script = u"exec %1 -n 3 --transport tcp --timeout 30 "
                           "--rank-prefix \"ip netns exec ${MMPI_LINKEMU_PREFIX}{rank}\" "
                           "--rank-address \"${MMPI_LINKEMU_SUBNET}.{rank+1}\" %2 links --wait 10000 --json"_s
                               .arg(mmpirun, bench);
    const ProcessRun run = runEmulated({u"--nodes"_s, u"3"_s, u"--profile"_s, u"bluetooth"_s}, script, 50000);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const auto line = run.out.split(u'\n').filter(u"\"op\":\"links\""_s);
    QVERIFY2(line.size() == 1, qPrintable(run.dump()));
    const QString json = line.first().mid(line.first().indexOf(u'{')); // after mmpirun's "[0] "
    const QJsonArray results = QJsonDocument::fromJson(json.toUtf8()).object().value(u"results"_s).toArray();
    QCOMPARE(results.size(), 3);
    for (const auto &value : results) {
        const QJsonObject view = value.toObject();
        const double latency = view.value(u"latency_us"_s).toDouble() / 1e6;
        const double rate = view.value(u"rate"_s).toDouble();
        qInfo("rank %d: latencies after %.0f ms, %.1f ms; a rate after %.0f ms, %.0f bytes/s (profile: %.0f)",
              view.value(u"rank"_s).toInt(), view.value(u"latency_known_ms"_s).toDouble(), latency * 1e3,
              view.value(u"rate_known_ms"_s).toDouble(), rate, PayloadRate);
        QVERIFY2(latency >= LatencyS && latency < 2 * LatencyS, qPrintable(run.dump()));
        // Timed over a few packets by the far end's reads: within a quarter
        // either way; the Wi-Fi prior it replaces is 55 times the profile's.
        QVERIFY2(rate > 0.75 * PayloadRate && rate < 1.25 * PayloadRate, qPrintable(run.dump()));
    }
}

void TestLinkEmu::controlNetworkBypassesTheRadios()
{
    // Given two nodes on Bluetooth radios (a round trip of 60 ms and more)
    // and a control network, a UDP round trip between the nodes' ctl0
    // addresses takes well under a millisecond of the radios' latency, and
    // the host reaches them at .254's subnet.
    const QStringList options{u"--nodes"_s, u"2"_s, u"--profile"_s, u"bluetooth"_s, u"--control"_s, u"10.79.0"_s};
    QProcess job;
    job.start(emulator, options + QStringList{u"--"_s, u"sh"_s, u"-c"_s,
                                              u"echo ready $$ $MMPI_LINKEMU_CONTROL $MMPI_LINKEMU_CONTROL_SUBNET\n"_s
                                                  + inNode(1, u"udp-echo --port 7001 --seconds 8 &"_s) + u"\n"_s
                                                  + inNode(0, u"udp-ping --to 10.79.0.2 --port 7001 --count 20"_s)
                                                  + u"\nstatus=$?; kill $!; exit $status"_s});
    QVERIFY(job.waitForStarted(5000));
    const QStringList ready = readyLine(job);
    const qint64 pid = job.processId();
    QVERIFY2(ready.size() == 4 && ready[2] == u"mec%1b"_s.arg(pid) && ready[3] == u"10.79.0"_s,
             qPrintable(ready.join(u' ')));
    QCOMPARE(controlLinksOf(pid).size(), 3); // the bridge and a veth per node
    const ProcessRun run = finishProcess(job, 25000);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    static const QRegularExpression rtt(u"rtt_us median=(\\d+)"_s);
    const auto m = rtt.match(run.out);
    QVERIFY2(m.hasMatch(), qPrintable(run.dump()));
    QVERIFY2(m.captured(1).toDouble() < 0.25 * 2 * LatencyS * 1e6, qPrintable(run.dump()));
    // And nothing of it is left on the host
    QVERIFY2(controlLinksOf(pid).isEmpty(), qPrintable(controlLinksOf(pid).join(u' ')));
    // A control network on the radios' own subnet is a usage error
    const ProcessRun same = runProcess(emulator, {u"--control"_s, u"10.77.0"_s, u"--"_s, u"true"_s});
    QCOMPARE(same.exitCode, 2);
    QVERIFY2(same.err.contains(u"--control needs a /24 of its own"_s), qPrintable(same.dump()));
}

void TestLinkEmu::noNamespaceLeftAfterTheCommandIsKilled()
{
    // Given a command that left a process inside a namespace, when the
    // command is killed (SIGKILL), then the emulator ends with 137 and
    // neither the namespaces nor the process inside are left.
    QProcess job;
    job.start(emulator, {u"--nodes"_s, u"2"_s, u"--"_s, u"sh"_s, u"-c"_s,
                         u"ip netns exec \"$MMPI_LINKEMU_NS_1\" sleep 60 & echo ready $$ $!; wait"_s});
    QVERIFY(job.waitForStarted(5000));
    const QStringList ready = readyLine(job);
    QVERIFY2(ready.size() == 3 && ready[0] == u"ready"_s, qPrintable(ready.join(u' ')));
    QCOMPARE(namespacesOf(job.processId()).size(), 2);
    const qint64 inside = ready.value(2).toLongLong();
    QVERIFY(::kill(pid_t(ready.value(1).toLongLong()), SIGKILL) == 0);
    const qint64 pid = job.processId();
    const ProcessRun run = finishProcess(job, 15000);
    QCOMPARE(run.exitCode, 137);
    QVERIFY2(namespacesOf(pid).isEmpty(), qPrintable(namespacesOf(pid).join(u' ')));
    QVERIFY(within(5000, [&] { return processGone(inside); }));
}

void TestLinkEmu::noNamespaceLeftAfterTheEmulatorIsKilled_data()
{
    QTest::addColumn<int>("signal");
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGKILL") << int(SIGKILL);
}

void TestLinkEmu::noNamespaceLeftAfterTheEmulatorIsKilled()
{
    // Given a running command, when the emulator itself is ended (SIGTERM:
    // it stops the command; SIGKILL: its guardian and the kernel do), then
    // no namespace and no command is left.
    QFETCH(int, signal);
    QProcess job;
    job.start(emulator, {u"--nodes"_s, u"2"_s, u"--control"_s, u"10.79.0"_s, u"--"_s, u"sh"_s, u"-c"_s,
                         u"ip netns exec \"$MMPI_LINKEMU_NS_0\" sleep 60 & echo ready $$ $!; wait"_s});
    QVERIFY(job.waitForStarted(5000));
    const QStringList ready = readyLine(job);
    QVERIFY2(ready.size() == 3 && ready[0] == u"ready"_s, qPrintable(ready.join(u' ')));
    const qint64 pid = job.processId();
    QCOMPARE(namespacesOf(pid).size(), 2);
    QVERIFY(::kill(pid_t(pid), signal) == 0);
    const ProcessRun run = finishProcess(job, 15000);
    if (signal == SIGTERM)
        QCOMPARE(run.exitCode, 143);
    QVERIFY2(within(10000, [&] { return namespacesOf(pid).isEmpty(); }), qPrintable(namespacesOf(pid).join(u' ')));
    QVERIFY2(within(10000, [&] { return controlLinksOf(pid).isEmpty(); }), qPrintable(controlLinksOf(pid).join(u' ')));
    QVERIFY(within(5000, [&] { return processGone(ready.value(1).toLongLong()); }));
    QVERIFY(within(5000, [&] { return processGone(ready.value(2).toLongLong()); }));
}

// CTest counts 77 as skipped: the whole test needs what the emulator needs.
int main(int argc, char **argv)
{
    if (::geteuid() != 0) {
        std::fprintf(stderr, "tst_linkemu: skipped: the link emulator needs root (network namespaces, TUN)\n");
        return 77;
    }
    if (::access("/dev/net/tun", R_OK | W_OK) != 0) {
        std::fprintf(stderr, "tst_linkemu: skipped: /dev/net/tun is not usable here\n");
        return 77;
    }
    if (QStandardPaths::findExecutable(u"ip"_s).isEmpty()) {
        std::fprintf(stderr, "tst_linkemu: skipped: the 'ip' command (iproute2) is not installed\n");
        return 77;
    }
    TestLinkEmu test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_linkemu.moc"
