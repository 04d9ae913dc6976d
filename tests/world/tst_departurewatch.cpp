// DepartureWatch: a completion that waits for departure runs once the bytes
// queued before it have left the link (not when the link took them), but for
// a packet's worth, at once when no more than that waits, and when the link
// closes first; a drain of a large
// message gives the rate it left at, a small one gives none.
#include "departurewatch.h"

#include <QElapsedTimer>
#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;

namespace {

// A link whose kernel never sends by itself: the test says when bytes leave.
class DrainingLink : public Link
{
public:
    DrainingLink() { setState(State::Connected); }
    QString peerAddress() const override { return QStringLiteral("test://draining"); }
    void sendFrame(const Frame &frame) override
    {
        const qint64 bytes = FrameHeaderSize + frame.payload.size();
        mutableCounters().bytesQueued += quint64(bytes);
        unsent += bytes;
    }
    qint64 bytesToWrite() const override { return 0; }
    qint64 unsentBytes() const override { return unsent; }
    void close() override { setState(State::Closed); }
    void drain(qint64 bytes) { unsent = std::max<qint64>(0, unsent - bytes); }

    qint64 unsent = 0;
};

Frame frameOf(qsizetype bytes)
{
    return makeFrame(FrameKind::Data, ItemType::UnsignedByte, quint32(bytes), QByteArray(bytes, 'x'));
}

// Patience for a poll that is due within DepartureWatch::MaxPollMs.
constexpr int Timeout = 5000;

} // namespace

class tst_DepartureWatch : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void waitsUntilItsBytesHaveLeft();
    void nothingUnsentCompletesAtOnce();
    void aPacketUnsentCompletesAtOnce();
    void closedLinkCompletesItsWaits();
    void drainOfALargeMessageIsARate();
    void smallMessagesGiveNoRate();
    void streamOfSmallFramesIsARate();
};

void tst_DepartureWatch::waitsUntilItsBytesHaveLeft()
{
    DepartureWatch watch({});
    DrainingLink link;
    // Given two frames on a link, each waited for once the link took it
    QList<int> done;
    const qint64 first = FrameHeaderSize + 6000;
    const qint64 second = FrameHeaderSize + 9000;
    link.sendFrame(frameOf(6000));
    watch.waitForDeparture(1, &link, [&](const Error &e) { QVERIFY(!e.isError()); done << 1; });
    link.sendFrame(frameOf(9000));
    watch.waitForDeparture(1, &link, [&](const Error &e) { QVERIFY(!e.isError()); done << 2; });
    // When more than a packet of the first is still unsent, nothing is done
    link.drain(first - DepartureWatch::SlackBytes - 1);
    QTest::qWait(3 * DepartureWatch::MaxPollMs);
    QVERIFY(done.isEmpty());
    // When at most a packet of it is left, the first is done, and only it
    link.drain(1);
    QTRY_COMPARE_WITH_TIMEOUT(done, QList<int>{1}, Timeout);
    QTest::qWait(3 * DepartureWatch::MaxPollMs);
    QCOMPARE(done, QList<int>{1});
    // When the rest has left, but for a packet, the second too
    link.drain(second);
    QTRY_COMPARE_WITH_TIMEOUT(done, (QList<int>{1, 2}), Timeout);
}

void tst_DepartureWatch::nothingUnsentCompletesAtOnce()
{
    DepartureWatch watch({});
    DrainingLink link;
    link.sendFrame(frameOf(100));
    link.drain(link.unsent);
    bool done = false;
    watch.waitForDeparture(1, &link, [&](const Error &) { done = true; });
    QVERIFY(done);
}

void tst_DepartureWatch::aPacketUnsentCompletesAtOnce()
{
    DepartureWatch watch({});
    DrainingLink link;
    // A frame of one packet that the kernel holds back (autocorking)
    link.sendFrame(frameOf(DepartureWatch::SlackBytes - FrameHeaderSize));
    QCOMPARE(link.unsent, DepartureWatch::SlackBytes);
    bool done = false;
    watch.waitForDeparture(1, &link, [&](const Error &) { done = true; });
    QVERIFY(done);
    // But a byte more waits
    link.sendFrame(frameOf(1));
    done = false;
    watch.waitForDeparture(1, &link, [&](const Error &) { done = true; });
    QVERIFY(!done);
    link.drain(link.unsent);
    QTRY_VERIFY_WITH_TIMEOUT(done, Timeout);
}

void tst_DepartureWatch::closedLinkCompletesItsWaits()
{
    DepartureWatch watch({});
    auto link = std::make_unique<DrainingLink>();
    link->sendFrame(frameOf(5000));
    int done = 0;
    watch.waitForDeparture(1, link.get(), [&](const Error &e) { QVERIFY(!e.isError()); ++done; });
    watch.waitForDeparture(1, link.get(), [&](const Error &e) { QVERIFY(!e.isError()); ++done; });
    // The frames are the replay buffer's once the link is gone: resent on the next
    link->close();
    QTRY_COMPARE_WITH_TIMEOUT(done, 2, Timeout);
    // And a link deleted outright too
    auto other = std::make_unique<DrainingLink>();
    other->sendFrame(frameOf(5000));
    watch.waitForDeparture(2, other.get(), [&](const Error &) { ++done; });
    other.reset();
    QTRY_COMPARE_WITH_TIMEOUT(done, 3, Timeout);
}

void tst_DepartureWatch::drainOfALargeMessageIsARate()
{
    QList<std::pair<int, double>> rates;
    DepartureWatch watch([&](int rank, double perSecond) { rates.append({rank, perSecond}); });
    DrainingLink link;
    // Given 64 KiB queued on a link, drained 8 KiB every 20 ms (400 kB/s)
    const qint64 bytes = 64 * 1024;
    link.sendFrame(frameOf(bytes - FrameHeaderSize));
    watch.noteQueued(3, &link, quint64(bytes));
    QElapsedTimer clock;
    clock.start();
    while (link.unsent > 0) {
        QTest::qWait(20);
        link.drain(8 * 1024);
    }
    const double actual = double(bytes) * 1000.0 / double(clock.elapsed());
    // Then one rate for that rank, about what the drain took: never faster
    // than the bytes over the time they took (the watch sees the end
    // later, not sooner), and not much slower (a poll's lateness)
    QTRY_COMPARE_WITH_TIMEOUT(rates.size(), 1, Timeout);
    QCOMPARE(rates.at(0).first, 3);
    QVERIFY2(rates.at(0).second <= actual * 1.2 && rates.at(0).second >= actual * 0.5,
             qPrintable(QStringLiteral("measured %1 B/s, drained at %2 B/s").arg(rates.at(0).second).arg(actual)));
}

void tst_DepartureWatch::smallMessagesGiveNoRate()
{
    int rates = 0;
    DepartureWatch watch([&](int, double) { ++rates; });
    DrainingLink link;
    // A message under the sample size, slow to leave, is no sample
    link.sendFrame(frameOf(4000));
    watch.noteQueued(1, &link, 4000 + FrameHeaderSize);
    QTest::qWait(50);
    link.drain(link.unsent);
    // Nor a large one the kernel took and sent at once
    link.sendFrame(frameOf(100000));
    link.drain(link.unsent);
    watch.noteQueued(1, &link, 100000 + FrameHeaderSize);
    QTest::qWait(5 * DepartureWatch::MaxPollMs);
    QCOMPARE(rates, 0);
}

void tst_DepartureWatch::streamOfSmallFramesIsARate()
{
    QList<double> rates;
    DepartureWatch watch([&](int, double perSecond) { rates.append(perSecond); });
    DrainingLink link;
    // Given a stream of 2 KiB segments queued one by one, 32 KiB waiting
    for (int i = 0; i < 16; ++i) {
        link.sendFrame(frameOf(2048 - FrameHeaderSize));
        watch.noteQueued(4, &link, 2048);
    }
    QElapsedTimer clock;
    clock.start();
    while (link.unsent > 0) {
        QTest::qWait(20);
        link.drain(4096);
    }
    // Then their drain is one rate, as one large message's would be
    QTRY_COMPARE_WITH_TIMEOUT(rates.size(), 1, Timeout);
    const double actual = 32768.0 * 1000.0 / double(clock.elapsed());
    QVERIFY2(rates.at(0) <= actual * 1.2 && rates.at(0) >= actual * 0.5,
             qPrintable(QStringLiteral("measured %1 B/s, drained at %2 B/s").arg(rates.at(0)).arg(actual)));
}

QTEST_MAIN(tst_DepartureWatch)
#include "tst_departurewatch.moc"
