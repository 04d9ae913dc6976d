// tst_linkemuradio: the link emulator's Radio model on times the test
// chooses (no namespaces, no root): airtime and latency, one queue for all
// of a node's frames, drops at the queue's limit, jitter that never
// reorders, and losses that a seed repeats.
#include "radio.h"

#include <QTest>

using mmpi::linkemu::Radio;
using mmpi::linkemu::RadioConfig;

namespace {

constexpr std::int64_t Ms = 1000000;

RadioConfig bluetooth()
{
    RadioConfig config;
    config.latencyMs = 30;
    config.rateBytesPerSecond = 90000;
    config.queueBytes = 90000;
    return config;
}

} // namespace

class TestLinkEmuRadio : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void framesWaitForEachOtherThenTheLatency()
    {
        // Given two 900-byte frames at once: 10 ms of air each, one after the other.
        Radio radio(bluetooth());
        const auto first = radio.transmit(0, 900);
        const auto second = radio.transmit(0, 900);
        QCOMPARE(first.outcome, Radio::Outcome::Deliver);
        QCOMPARE(first.arrivalNs, 40 * Ms);
        QCOMPARE(second.arrivalNs, 50 * Ms);
        QCOMPARE(radio.queuedBytes(5 * Ms), std::size_t(1350));
        // An idle radio starts a frame at once.
        QCOMPARE(radio.transmit(100 * Ms, 90).arrivalNs, 131 * Ms);
    }

    void aFullQueueDropsAndAnEmptyOneTakesAnyFrame()
    {
        RadioConfig config = bluetooth();
        config.queueBytes = 1000;
        Radio radio(config);
        QCOMPARE(radio.transmit(0, 1500).outcome, Radio::Outcome::Deliver); // larger than the limit, but alone
        QCOMPARE(radio.transmit(0, 100).outcome, Radio::Outcome::QueueFull);
        QCOMPARE(radio.stats().droppedQueueFull, 1u);
        QCOMPARE(radio.transmit(int64_t(1500.0 / 90000 * 1e9) + 1, 900).outcome, Radio::Outcome::Deliver);
        QCOMPARE(radio.stats().frames, 2u);
        QCOMPARE(radio.stats().bytes, 2400u);
    }

    void jitterNeverReorders()
    {
        RadioConfig config = bluetooth();
        config.jitterMs = 20;
        Radio radio(config);
        std::int64_t last = 0, spread = 0;
        for (int i = 0; i < 1000; ++i) {
            const auto verdict = radio.transmit(std::int64_t(i) * 2 * Ms, 9); // 0.1 ms of air
            QVERIFY(verdict.arrivalNs >= last);
            spread = std::max(spread, verdict.arrivalNs - std::int64_t(i) * 2 * Ms);
            last = verdict.arrivalNs;
        }
        QVERIFY(spread > 45 * Ms && spread <= 50 * Ms + Ms); // the jitter shows, within its bound
    }

    void aSeedRepeatsItsLosses()
    {
        RadioConfig config = bluetooth();
        config.loss = 0.1;
        config.seed = 42;
        Radio a(config), b(config);
        int lost = 0;
        for (int i = 0; i < 2000; ++i) {
            const auto va = a.transmit(std::int64_t(i) * Ms, 9);
            QCOMPARE(va.outcome, b.transmit(std::int64_t(i) * Ms, 9).outcome);
            lost += va.outcome == Radio::Outcome::Lost;
        }
        QVERIFY2(lost > 140 && lost < 260, qPrintable(QString::number(lost))); // 200 expected, 4.7 sigma each way
        QCOMPARE(a.stats().lost, std::uint64_t(lost));
        QCOMPARE(a.stats().frames, 2000u); // a lost frame took its airtime
    }
};

QTEST_APPLESS_MAIN(TestLinkEmuRadio)
#include "tst_linkemuradio.moc"
