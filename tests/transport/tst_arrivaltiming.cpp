// ArrivalTiming on times the test chooses: a frame that arrives in several
// wake-ups is a rate of the bytes after the first over the time they took;
// a frame read at once, a short or small run, or one that reading paused
// give none; frames that keep arriving back to back are one run.
#include <mmpi/transport/arrivaltiming.h>

#include <QTest>

using mmpi::ArrivalTiming;

class TestArrivalTiming : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aFrameInSeveralWakeUpsIsARate()
    {
        // Given a 4 KiB frame (4140 bytes with its header) as Bluetooth
        // brings it: a packet of 1448 bytes each 16 ms.
        ArrivalTiming timing;
        QVERIFY(!timing.noteRead(1448, true, 1000));
        QVERIFY(!timing.noteRead(1448, true, 17000));
        const auto rate = timing.noteRead(1244, false, 33000);
        QVERIFY(rate);
        QCOMPARE(qRound(*rate), qRound(2692 / 0.032));
    }

    void aFrameReadAtOnceIsNoRate()
    {
        ArrivalTiming timing;
        QVERIFY(!timing.noteRead(70000, false, 1000));
        // ...and the next run starts afresh.
        QVERIFY(!timing.noteRead(100, true, 5000));
        QVERIFY(!timing.noteRead(3000, true, 9000));
        const auto rate = timing.noteRead(1000, false, 13000);
        QVERIFY(rate);
        QCOMPARE(qRound(*rate), qRound(4000 / 0.008));
    }

    void shortOrSmallRunsAreNoRate()
    {
        ArrivalTiming timing;
        // Two packets after the first, but within the event loop's noise.
        QVERIFY(!timing.noteRead(1448, true, 1000));
        QVERIFY(!timing.noteRead(4000, false, 1000 + ArrivalTiming::MinSpanUs - 1));
        // Long enough, but a single packet after the first.
        QVERIFY(!timing.noteRead(1448, true, 10000));
        QVERIFY(!timing.noteRead(ArrivalTiming::MinSampleBytes - 1, false, 30000));
    }

    void pausedReadingIsNoRate()
    {
        ArrivalTiming timing;
        QVERIFY(!timing.noteRead(1448, true, 1000));
        timing.interrupt();
        QVERIFY(!timing.noteRead(20000, false, 900000));
    }

    void framesBackToBackAreOneRun()
    {
        // Given 2 KiB segments whose packets straddle them: after each
        // wake-up some frame is still incomplete, so the run goes on.
        ArrivalTiming timing;
        QVERIFY(!timing.noteRead(1448, true, 0));
        qint64 at = 0;
        for (int i = 0; i < 10; ++i)
            QVERIFY(!timing.noteRead(1448, true, at += 16000));
        const auto rate = timing.noteRead(1448, false, at += 16000);
        QVERIFY(rate);
        QCOMPARE(qRound(*rate), qRound(11 * 1448 / (at / 1e6)));
    }
};

QTEST_GUILESS_MAIN(TestArrivalTiming)
#include "tst_arrivaltiming.moc"
