// ProbeSamples: a link probe's samples, taken while other traffic may queue
// ahead of a ping or its pong, give an estimate that the traffic cannot make
// worse than the best sample, and say when it got in the way.
#include "probesamples.h"

#include <QTest>

using namespace mmpi::detail;

namespace {

// A 30 ms, 90 kB/s radio as the sim's `bluetooth` profile makes it: what a
// ping of `bytes` adds to a round trip, and the probe's frame of 8 + 40 bytes.
constexpr double Rate = 0.09; // bytes per microsecond
constexpr double FrameBytes = 48;
constexpr double CleanRtt = 60000 + 2 * FrameBytes / Rate;

double burstUs(double bytes)
{
    return CleanRtt + bytes / Rate;
}

// Four pings, two bursts of 8 small pings, two rate bursts of 4 x 16 KiB,
// with `delayUs[i]` added to the i-th of those 8 samples.
ProbeSamples probe(const QList<double> &delayUs = {})
{
    const auto delay = [&](int i) { return delayUs.value(i, 0.0); };
    ProbeSamples s;
    for (int i = 0; i < 4; ++i)
        s.addRoundTrip(CleanRtt + delay(i));
    for (int i = 0; i < 2; ++i)
        s.addOverheadBurst(burstUs(7 * FrameBytes) + delay(4 + i), 8);
    for (int i = 0; i < 2; ++i)
        s.addRateBurst(burstUs(4 * 16384) + delay(6 + i), 4 * 16384);
    return s;
}

} // namespace

class TestProbeSamples : public QObject
{
    Q_OBJECT
private slots:
    void cleanSamplesGiveTheLink();
    void queueingOnAnySampleIsSeenAndLeftOut_data();
    void queueingOnAnySampleIsSeenAndLeftOut();
    void jitterIsNotTrafficAndAnEvenWaitIsTheLink();
    void disturbedProbeOnlyImprovesTheOldEstimate();
    void cleanProbeReplacesTheOldEstimate();
};

void TestProbeSamples::cleanSamplesGiveTheLink()
{
    const ProbeSamples s = probe();
    QVERIFY(!s.disturbed());
    const LinkEstimate e = s.estimate(FrameBytes, 1234);
    QCOMPARE(e.measuredAtMs, 1234);
    QVERIFY(!e.disturbed);
    QVERIFY2(qAbs(e.bytesPerUs - Rate) < 0.001, qPrintable(QString::number(e.bytesPerUs)));
    QVERIFY2(qAbs(e.latencyUs - 30000) < 100, qPrintable(QString::number(e.latencyUs)));
    // The radio costs nothing per frame beyond its bytes.
    QVERIFY2(e.overheadUs < 50, qPrintable(QString::number(e.overheadUs)));
}

void TestProbeSamples::queueingOnAnySampleIsSeenAndLeftOut_data()
{
    QTest::addColumn<int>("sample");
    const char *names[] = {"ping 1", "ping 2", "ping 3", "ping 4", "overhead burst 1", "overhead burst 2",
                           "rate burst 1", "rate burst 2"};
    for (int i = 0; i < 8; ++i)
        QTest::newRow(names[i]) << i;
}

// As a pong that waited behind 256 KiB of a broadcast's segments: 2.9 s.
void TestProbeSamples::queueingOnAnySampleIsSeenAndLeftOut()
{
    QFETCH(int, sample);
    QList<double> delays(8, 0.0);
    delays[sample] = 2.9e6;
    const ProbeSamples s = probe(delays);
    QVERIFY(s.disturbed());
    const LinkEstimate e = s.estimate(FrameBytes, 0);
    QVERIFY(e.disturbed);
    QVERIFY2(qAbs(e.bytesPerUs - Rate) < 0.001, qPrintable(QString::number(e.bytesPerUs)));
    QVERIFY2(qAbs(e.latencyUs - 30000) < 100, qPrintable(QString::number(e.latencyUs)));
    QVERIFY2(e.overheadUs < 50, qPrintable(QString::number(e.overheadUs)));
}

// Small jitter is not traffic: 1 ms or a quarter of the fastest sample.
void TestProbeSamples::jitterIsNotTrafficAndAnEvenWaitIsTheLink()
{
    QVERIFY(!probe({900, 0, 400, 0, 0, 900, 0, 900}).disturbed());
    QVERIFY(probe({0, 0, 0, 0.25 * CleanRtt + 1100}).disturbed());
    // The same wait on every sample of a kind cannot be told from the link:
    // the estimate says what was measured.
    const LinkEstimate e = probe({5000, 5000, 5000, 5000}).estimate(FrameBytes, 0);
    QVERIFY2(qAbs(e.latencyUs - 32500) < 100, qPrintable(QString::number(e.latencyUs)));
}

void TestProbeSamples::disturbedProbeOnlyImprovesTheOldEstimate()
{
    const LinkEstimate old{30000, 0.09, 10, 100, false};
    // Worse in latency and rate, better in overhead.
    const LinkEstimate fresh{45000, 0.05, 2, 400, true};
    const LinkEstimate e = mergedEstimate(&old, fresh);
    QCOMPARE(e.latencyUs, 30000.0);
    QCOMPARE(e.bytesPerUs, 0.09);
    QCOMPARE(e.overheadUs, 2.0);
    QCOMPARE(e.measuredAtMs, 400);
    QVERIFY(e.disturbed);
    // Nothing to improve: the disturbed probe is all there is.
    QCOMPARE(mergedEstimate(nullptr, fresh).latencyUs, 45000.0);
}

// The link itself may have got slower (a phone walked away).
void TestProbeSamples::cleanProbeReplacesTheOldEstimate()
{
    const LinkEstimate old{30000, 0.09, 10, 100, true};
    const LinkEstimate fresh{45000, 0.05, 20, 400, false};
    const LinkEstimate e = mergedEstimate(&old, fresh);
    QCOMPARE(e.latencyUs, 45000.0);
    QCOMPARE(e.bytesPerUs, 0.05);
    QCOMPARE(e.overheadUs, 20.0);
    QVERIFY(!e.disturbed);
}

QTEST_APPLESS_MAIN(TestProbeSamples)
#include "tst_probesamples.moc"
