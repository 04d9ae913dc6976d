// tst_mmpirun_netns: mmpirun's --rank-prefix and --rank-address running real
// worlds. First over distinct loopback addresses (no privileges needed);
// then with each rank in a network namespace of its own, the two joined by a
// veth pair the test makes (root and `ip` needed, else skipped): the token
// ring runs across it, and cutting it (`ip link set ... down`) is noticed by
// heartbeats, which TCP alone would not do for many minutes. The namespaces
// and the veth pair are removed whatever happens.
#include "processrun.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>

#include <chrono>
#include <memory>

#include <unistd.h>

namespace {

using namespace mmpi::test;
using namespace Qt::StringLiterals;

const QString mmpirun = QStringLiteral(MMPIRUN_PATH);
const QString ring = QStringLiteral(MMPI_RING_PATH);
const QString ftnode = QStringLiteral(MMPIRUN_FTNODE_PATH);
const QString bench = QStringLiteral(MMPI_BENCH_PATH);

qint64 monotonicMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

// `ip` with arguments; the error names the command and what it said.
bool ip(const QStringList &args, QString *error = nullptr)
{
    const ProcessRun run = runProcess(u"ip"_s, args, {.timeoutMs = 10000});
    if (run.exitCode != 0 && error)
        *error = u"ip %1: %2"_s.arg(args.join(u' '), run.err.trimmed());
    return run.exitCode == 0;
}

// Two network namespaces, ns0 with 10.77.0.1/24 and ns1 with 10.77.0.2/24 on
// the two ends of a veth pair. Names carry the test's pid, so parallel runs
// do not meet; the destructor deletes both namespaces (and with them the pair).
class TwoNamespaces
{
public:
    static std::unique_ptr<TwoNamespaces> create(QString *error)
    {
        std::unique_ptr<TwoNamespaces> n(new TwoNamespaces);
        const QString a = n->veth(0), b = n->veth(1);
        const QList<QStringList> steps = {
            {u"netns"_s, u"add"_s, n->name(0)},
            {u"netns"_s, u"add"_s, n->name(1)},
            {u"link"_s, u"add"_s, a, u"type"_s, u"veth"_s, u"peer"_s, u"name"_s, b},
            {u"link"_s, u"set"_s, a, u"netns"_s, n->name(0)},
            {u"link"_s, u"set"_s, b, u"netns"_s, n->name(1)},
            {u"-n"_s, n->name(0), u"addr"_s, u"add"_s, u"10.77.0.1/24"_s, u"dev"_s, a},
            {u"-n"_s, n->name(1), u"addr"_s, u"add"_s, u"10.77.0.2/24"_s, u"dev"_s, b},
            {u"-n"_s, n->name(0), u"link"_s, u"set"_s, a, u"up"_s},
            {u"-n"_s, n->name(1), u"link"_s, u"set"_s, b, u"up"_s},
        };
        for (const QStringList &step : steps) {
            if (!ip(step, error))
                return nullptr; // the destructor removes what was made
        }
        return n;
    }

    ~TwoNamespaces()
    {
        for (int i = 0; i < 2; ++i)
            ip({u"netns"_s, u"del"_s, name(i)});
        // Still there only if a namespace was never made.
        ip({u"link"_s, u"del"_s, veth(0)});
    }

    QString name(int i) const { return u"mmpit%1-%2"_s.arg(::getpid()).arg(i); }
    // At most 15 characters, an interface name's limit.
    QString veth(int i) const { return u"mt%1%2"_s.arg(::getpid()).arg(i == 0 ? u'a' : u'b'); }
    QString prefix() const { return u"ip netns exec mmpit%1-{rank}"_s.arg(::getpid()); }
    bool setLink(bool up, QString *error) const
    {
        return ip({u"-n"_s, name(0), u"link"_s, u"set"_s, veth(0), up ? u"up"_s : u"down"_s}, error);
    }

private:
    TwoNamespaces() = default;
};

// Only root can make namespaces; a machine without `ip` cannot either.
QString whyNoNamespaces()
{
    if (::geteuid() != 0)
        return u"network namespaces need root (run the test as root to include it)"_s;
    if (QStandardPaths::findExecutable(u"ip"_s).isEmpty())
        return u"the 'ip' command (iproute2) is not installed"_s;
    return {};
}

} // namespace

class TestMmpirunNetns : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void ringOverLoopbackAddresses();
    void ringAcrossNamespaces();
    void cutLinkIsNoticedByHeartbeats();
    void streamSurvivesACutLinkExactlyOnce();
};

void TestMmpirunNetns::ringOverLoopbackAddresses()
{
    // The whole of 127/8 is loopback on Linux: three ranks, three addresses.
    const ProcessRun run = runMmpirun({u"-n"_s, u"3"_s, u"--transport"_s, u"tcp"_s, u"--rank-address"_s,
                                       u"127.0.0.{rank+2}"_s, u"--timeout"_s, u"60"_s, ring},
                                      {.timeoutMs = 60000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] World of 3 node(s) over tcp formed"_s), qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] 9 hops in"_s), qPrintable(run.dump()));
}

void TestMmpirunNetns::ringAcrossNamespaces()
{
    if (const QString why = whyNoNamespaces(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QString error;
    const auto namespaces = TwoNamespaces::create(&error);
    QVERIFY2(namespaces, qPrintable(error));
    const ProcessRun run = runMmpirun({u"-n"_s, u"2"_s, u"--transport"_s, u"tcp"_s, u"--rank-prefix"_s,
                                       namespaces->prefix(), u"--rank-address"_s, u"10.77.0.{rank+1}"_s,
                                       u"--timeout"_s, u"60"_s, ring},
                                      {.timeoutMs = 60000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] World of 2 node(s) over tcp formed"_s), qPrintable(run.dump()));
    QVERIFY2(run.out.contains(u"[0] 6 hops in"_s), qPrintable(run.dump()));
}

void TestMmpirunNetns::cutLinkIsNoticedByHeartbeats()
{
    if (const QString why = whyNoNamespaces(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QString error;
    const auto namespaces = TwoNamespaces::create(&error);
    QVERIFY2(namespaces, qPrintable(error));

    constexpr int Interval = 100;
    constexpr int Timeout = 1500;
    QProcess job;
    // Detection alone (no grace): lost at the timeout, never dialled again.
    job.setProcessEnvironment(systemEnvironmentWith({{u"MMPI_HEARTBEAT_INTERVAL_MS"_s, QString::number(Interval)},
                                                     {u"MMPI_HEARTBEAT_TIMEOUT_MS"_s, QString::number(Timeout)},
                                                     {u"MMPI_RECONNECT_GRACE_MS"_s, u"0"_s}}));
    job.start(mmpirun, {u"-n"_s, u"2"_s, u"--transport"_s, u"tcp"_s, u"--rank-prefix"_s, namespaces->prefix(),
                        u"--rank-address"_s, u"10.77.0.{rank+1}"_s, u"--timeout"_s, u"60"_s, ftnode,
                        u"--max-ms"_s, u"30000"_s});
    QVERIFY(job.waitForStarted(10000));

    QString out;
    QElapsedTimer clock;
    clock.start();
    while (out.count(u"event=formed"_s) < 2 && job.state() == QProcess::Running && clock.elapsed() < 30000) {
        job.waitForReadyRead(100);
        out += QString::fromUtf8(job.readAllStandardOutput());
    }
    QVERIFY2(out.count(u"event=formed"_s) == 2, qPrintable(out + QString::fromUtf8(job.readAllStandardError())));
    QTest::qWait(500); // heartbeats flow; nobody is suspect

    const qint64 cutAt = monotonicMs();
    QVERIFY2(namespaces->setLink(false, &error), qPrintable(error));
    ProcessRun run = finishProcess(job, 30000);
    run.out.prepend(out);
    const auto dump = [&run] { return run.dump(); };
    QVERIFY2(run.exitCode == 0, qPrintable(dump()));

    static const QRegularExpression event(uR"(^\[(\d)\] event=(suspect|alive|lost) peer=(\d) mono_ms=(\d+)(.*)$)"_s,
                                          QRegularExpression::MultilineOption);
    QHash<int, qint64> suspectAt, lostAt;
    QHash<int, QString> lostDetails;
    for (auto it = event.globalMatch(run.out); it.hasNext();) {
        const auto m = it.next();
        const int rank = m.captured(1).toInt();
        QCOMPARE(m.captured(3).toInt(), 1 - rank);
        QVERIFY2(m.captured(2) != u"alive"_s, qPrintable(dump()));
        QVERIFY2(!(m.captured(2) == u"suspect"_s ? suspectAt : lostAt).contains(rank), qPrintable(dump()));
        (m.captured(2) == u"suspect"_s ? suspectAt : lostAt).insert(rank, m.captured(4).toLongLong());
        if (m.captured(2) == u"lost"_s)
            lostDetails.insert(rank, m.captured(5));
    }
    for (int rank = 0; rank < 2; ++rank) {
        QVERIFY2(suspectAt.contains(rank) && lostAt.contains(rank), qPrintable(dump()));
        const qint64 suspect = suspectAt.value(rank) - cutAt;
        const qint64 lost = lostAt.value(rank) - cutAt;
        qInfo() << "rank" << rank << "suspect" << suspect << "ms and lost" << lost << "ms after the cut";
        // Last heard at most ~1.25 intervals before the cut: never earlier
        // than the timeouts less that, and not much later than the timeouts.
        QVERIFY2(suspect >= Timeout / 2 - 2.5 * Interval && suspect <= Timeout / 2 + 5000, qPrintable(dump()));
        QVERIFY2(lost >= Timeout - 2.5 * Interval && lost <= Timeout + 5000, qPrintable(dump()));
        QVERIFY2(lostDetails.value(rank).contains(u"code=NodeLost reason=no frame or heartbeat from rank %1"_s.arg(1 - rank)),
                 qPrintable(dump()));
    }
}

// Issue 5's acceptance run: 100,000 numbered messages over tcp between two
// namespaces, the veth link cut for 2 s in the middle. The heartbeat timeout
// (1 s) is shorter than the cut, so both nodes drop the link, dial again
// until the link is back and resume: every message arrives exactly once.
void TestMmpirunNetns::streamSurvivesACutLinkExactlyOnce()
{
    if (const QString why = whyNoNamespaces(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QString error;
    const auto namespaces = TwoNamespaces::create(&error);
    QVERIFY2(namespaces, qPrintable(error));

    QProcess job;
    job.setProcessEnvironment(systemEnvironmentWith({{u"MMPI_HEARTBEAT_INTERVAL_MS"_s, u"100"_s},
                                                     {u"MMPI_HEARTBEAT_TIMEOUT_MS"_s, u"1000"_s},
                                                     {u"MMPI_RECONNECT_GRACE_MS"_s, u"20000"_s}}));
    // 25,000 a second: 4 s of stream, the cut from about 1 s to 3 s.
    job.start(mmpirun, {u"-n"_s, u"2"_s, u"--transport"_s, u"tcp"_s, u"--rank-prefix"_s, namespaces->prefix(),
                        u"--rank-address"_s, u"10.77.0.{rank+1}"_s, u"--timeout"_s, u"120"_s, bench, u"stream"_s,
                        u"--count"_s, u"100000"_s, u"--rate"_s, u"25000"_s, u"--json"_s});
    QVERIFY(job.waitForStarted(10000));
    QTest::qWait(1000);
    QVERIFY2(job.state() == QProcess::Running, qPrintable(QString::fromUtf8(job.readAllStandardError())));
    QVERIFY2(namespaces->setLink(false, &error), qPrintable(error));
    QTest::qWait(2000);
    QVERIFY2(namespaces->setLink(true, &error), qPrintable(error));
    const ProcessRun run = finishProcess(job, 90000);
    const QString &out = run.out, &err = run.err;
    const auto dump = [&run] { return run.dump(); };
    QVERIFY2(run.exitCode == 0, qPrintable(dump()));

    const qsizetype start = out.indexOf(u'{');
    QVERIFY2(start >= 0, qPrintable(dump()));
    const QJsonObject result = QJsonDocument::fromJson(out.mid(start).trimmed().toUtf8())
                                   .object().value(u"results"_s).toArray().at(0).toObject();
    QVERIFY2(!result.isEmpty(), qPrintable(dump()));
    QCOMPARE(result.value(u"sent"_s).toInteger(), 100000);
    QCOMPARE(result.value(u"received"_s).toInteger(), 100000);
    QCOMPARE(result.value(u"lost"_s).toInteger(), 0);
    QCOMPARE(result.value(u"duplicates"_s).toInteger(), 0);
    QCOMPARE(result.value(u"out_of_order"_s).toInteger(), 0);
    // The cut was real: the stream broke and resumed at least once.
    QVERIFY2(result.value(u"reconnects"_s).toInteger() >= 1, qPrintable(dump()));
    QVERIFY2(err.contains(u"is back after"_s), qPrintable(dump()));
    qInfo().noquote() << "stream across a 2 s cut:" << out.mid(start).trimmed() << "\n" << err;
}

QTEST_GUILESS_MAIN(TestMmpirunNetns)
#include "tst_mmpirun_netns.moc"
