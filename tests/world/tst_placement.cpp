// A large message of fixed-size items is written to the place its receiver
// offers as it arrives (MessageSink::placeFor), also when the receiver offers
// one only after the first chunks came, and the receiver hears after each
// chunk how far it has come (handlePlacedProgress): what it is told is there
// is there. A whole message that a waiting thread reads goes to the place
// too, when it is large enough to be worth one; a fragmented one is put
// together by that thread, or by the progress thread from where it stopped.
#include "worldharness.h"

#include <mmpi/transport/linkreader.h>
#include <mmpi/world/framewaiter.h>

#include <QElapsedTimer>

#include <QMutex>
#include <QSemaphore>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

using namespace mmpi;
using mmpi::test::WorldHarness;

namespace {

constexpr int Chunk = 64 * 1024;

class PlacingSink : public MessageSink
{
public:
    PlacingSink(QByteArray expected, int offerFromAsk) : m_expected(std::move(expected)), m_offerFromAsk(offerFromAsk) {}

    char *placeFor(const FrameHeader &, qint64 bytes) override
    {
        QMutexLocker lock(&m_mutex);
        if (++m_asked < m_offerFromAsk || bytes != m_expected.size())
            return nullptr;
        m_place = QByteArray(bytes, '\0');
        return m_place.data();
    }
    void handlePlacedProgress(int, qint64 bytes) override
    {
        QMutexLocker lock(&m_mutex);
        m_progress.append(bytes);
        if (bytes > m_place.size() || std::memcmp(m_place.constData(), m_expected.constData(), size_t(bytes)) != 0)
            m_badProgress = bytes;
    }
    void handleFrame(const Frame &frame) override
    {
        QMutexLocker lock(&m_mutex);
        m_placedMessage = frame.header.flags & PlacedPayload;
        m_done.release();
    }
    void handlePeerGone(int, const Error &) override {}

    bool waitForMessage() { return m_done.tryAcquire(1, 10000); }
    QMutex m_mutex;
    QByteArray m_expected;
    int m_offerFromAsk;
    int m_asked = 0;
    QByteArray m_place;
    QList<qint64> m_progress;
    qint64 m_badProgress = -1;
    bool m_placedMessage = false;

private:
    QSemaphore m_done;
};

// Takes frames on any thread (as the comm layer's router does) until told
// otherwise, and offers a place, if asked to, for a message of `placed`
// bytes. Notes the thread each frame and progress report came on.
class WaiterSink : public MessageSink
{
public:
    explicit WaiterSink(qint64 placed) : m_placed(placed) {}

    bool acceptsFromAnyThread(const FrameHeader &) const override { return m_takeHere.load(); }
    char *placeFor(const FrameHeader &, qint64 bytes) override
    {
        QMutexLocker lock(&m_mutex);
        m_asked.append(bytes);
        if (bytes != m_placed)
            return nullptr;
        m_place = QByteArray(bytes, '\0');
        return m_place.data();
    }
    void handleFrame(const Frame &frame) override
    {
        QMutexLocker lock(&m_mutex);
        m_frames.append(frame);
        m_frameThreads.append(QThread::currentThread());
    }
    void handlePlacedProgress(int, qint64 bytes) override
    {
        QMutexLocker lock(&m_mutex);
        m_progress.append({bytes, QThread::currentThread()});
        if (bytes >= m_takeHereUpTo)
            m_takeHere = false;
    }
    void handlePeerGone(int, const Error &) override {}
    qsizetype frames()
    {
        QMutexLocker lock(&m_mutex);
        return m_frames.size();
    }

    QMutex m_mutex;
    qint64 m_placed;
    std::atomic<bool> m_takeHere = true;
    qint64 m_takeHereUpTo = std::numeric_limits<qint64>::max(); // then frames go to the progress thread
    QList<qint64> m_asked;
    QByteArray m_place;
    QList<Frame> m_frames;
    QList<QThread *> m_frameThreads;
    QList<std::pair<qint64, QThread *>> m_progress;
};

// Has a thread wait on `receiver`'s link to `sender` and, once it reads it,
// `sender` send it `message`; returns when `sink` holds a frame (or after
// 10 s). False if the message could not be sent.
bool sendWhileWaiting(World &sender, World &receiver, WaiterSink &sink, const QByteArray &message)
{
    QElapsedTimer clock;
    clock.start();
    int asked = 0;
    bool sent = false;
    // The wait asks its condition again after claiming the link.
    FrameWaiter::forThisThread()->wait(receiver, sender.rank(), [&] {
        if (++asked == 2)
            sent = sender.sendFrame(receiver.rank(), makeFrame(FrameKind::Data, ItemType::UnsignedByte,
                                                               quint32(message.size()), message)).hasValue();
        return sink.frames() == 1 || clock.elapsed() > 10000;
    });
    FrameWaiter::forThisThread()->releaseParked();
    return sent;
}

QByteArray pattern(int bytes)
{
    QByteArray b(bytes, Qt::Uninitialized);
    for (int i = 0; i < bytes; ++i)
        b[i] = char(i * 13 + i / 97);
    return b;
}

// Starts two worlds of `harness`, the second with `sink` and both cutting
// messages into `chunk` bytes (0: the transport's choice); true once both
// are formed.
bool formPair(WorldHarness &harness, const std::shared_ptr<MessageSink> &sink, int chunk, std::vector<World *> &worlds)
{
    for (int r = 0; r < 2; ++r) {
        WorldConfig config = harness.config(r, 2);
        config.chunkSize = chunk;
        worlds.push_back(harness.start(config, r == 1 ? sink : nullptr));
    }
    return std::all_of(worlds.cbegin(), worlds.cend(), [](World *w) { return w->waitForFormed(); });
}

} // namespace

class TestPlacement : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void placedMessageReportsItsProgress_data()
    {
        // asked when the message begins and before each later chunk
        QTest::addColumn<int>("offerFromAsk");
        QTest::addColumn<int>("firstReported"); // the chunk after which progress is first reported
        QTest::newRow("offered at the start") << 1 << 1;
        QTest::newRow("offered at the third chunk") << 4 << 3;
    }
    void placedMessageReportsItsProgress()
    {
        QFETCH(int, offerFromAsk);
        QFETCH(int, firstReported);
        constexpr int Count = 250'000; // 1 MB of 32-bit items: 16 chunks
        QByteArray payload(Count * 4, Qt::Uninitialized);
        for (int i = 0; i < payload.size(); ++i)
            payload[i] = char(i * 7 + i / 251);
        auto sink = std::make_shared<PlacingSink>(payload, offerFromAsk);
        // Given two worlds with small chunks, the second one offering a place
        WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
        std::vector<World *> worlds;
        QVERIFY(formPair(harness, sink, Chunk, worlds));
        // When the first sends it a large message
        QVERIFY(worlds[0]->sendFrame(1, makeFrame(FrameKind::Data, ItemType::Int, Count, payload)));
        QVERIFY(sink->waitForMessage());
        // Then it arrives in the place, whole
        QMutexLocker lock(&sink->m_mutex);
        QVERIFY(sink->m_placedMessage);
        QCOMPARE(sink->m_place, payload);
        // And every chunk but the last was reported, each report true when made
        QCOMPARE(sink->m_badProgress, qint64(-1));
        const QList<qint64> &progress = sink->m_progress;
        const int chunksButLast = payload.size() / Chunk; // 15 whole ones and a shorter last
        QCOMPARE(progress.size(), chunksButLast - firstReported + 1);
        for (qsizetype i = 0; i < progress.size(); ++i)
            QCOMPARE(progress.at(i), qint64(Chunk) * (firstReported + i));
    }

    void wholeMessageGoesToTheWaitersPlace_data()
    {
        QTest::addColumn<QString>("transport");
        QTest::addColumn<bool>("offered");
        QTest::newRow("tcp, place offered") << QStringLiteral("tcp") << true;
        QTest::newRow("local, place offered") << QStringLiteral("local") << true;
        QTest::newRow("tcp, no place") << QStringLiteral("tcp") << false;
    }
    void wholeMessageGoesToTheWaitersPlace()
    {
        QFETCH(QString, transport);
        QFETCH(bool, offered);
        const QByteArray small = pattern(int(LinkReader::MinPlacedPayload) - 1);
        const QByteArray large = pattern(3000);
        auto sink = std::make_shared<WaiterSink>(offered ? large.size() : -1);
        // Given two worlds, the second one's sink taking frames on any thread
        WorldHarness harness(transport, WorldConfig::Mode::Launched);
        std::vector<World *> worlds;
        QVERIFY(formPair(harness, sink, 0, worlds));
        // When a thread waits on the second one's link and, once it reads
        // it (the wait asks its condition again after claiming the link),
        // the first sends a message just too small for a place, then a larger one
        QElapsedTimer clock;
        clock.start();
        int asked = 0;
        bool sent = false;
        FrameWaiter::forThisThread()->wait(*worlds[1], 0, [&] {
            if (++asked == 2) {
                const auto frame = [](const QByteArray &b) {
                    return makeFrame(FrameKind::Data, ItemType::UnsignedByte, quint32(b.size()), b);
                };
                sent = worlds[0]->sendFrame(1, frame(small)) && worlds[0]->sendFrame(1, frame(large));
            }
            return sink->frames() == 2 || clock.elapsed() > 10000;
        });
        FrameWaiter::forThisThread()->releaseParked();
        QVERIFY(sent);
        QMutexLocker lock(&sink->m_mutex);
        QCOMPARE(sink->m_frames.size(), 2);
        // Then only the larger one was offered a place
        QCOMPARE(sink->m_asked, QList<qint64>{large.size()});
        // And the smaller one came as it was sent
        QCOMPARE(sink->m_frames.at(0).payload, small);
        QVERIFY(!(sink->m_frames.at(0).header.flags & PlacedPayload));
        // And the larger one went to the place, or came whole without one
        const Frame &second = sink->m_frames.at(1);
        QCOMPARE(bool(second.header.flags & PlacedPayload), offered);
        QCOMPARE(second.header.count, quint32(large.size()));
        QCOMPARE(offered ? sink->m_place : second.payload, large);
        if (offered)
            QVERIFY(second.payload.isEmpty());
    }

    // A fragmented message read by a waiting thread is put together there
    // and delivered there: no hand-off to the progress thread.
    void fragmentedMessageIsPutTogetherByTheWaiter_data()
    {
        QTest::addColumn<QString>("transport");
        QTest::addColumn<bool>("offered");
        QTest::newRow("tcp, place offered") << QStringLiteral("tcp") << true;
        QTest::newRow("local, place offered") << QStringLiteral("local") << true;
        QTest::newRow("tcp, no place") << QStringLiteral("tcp") << false;
    }
    void fragmentedMessageIsPutTogetherByTheWaiter()
    {
        QFETCH(QString, transport);
        QFETCH(bool, offered);
        const QByteArray large = pattern(1'000'000); // 16 chunks, the last shorter
        auto sink = std::make_shared<WaiterSink>(offered ? large.size() : -1);
        // Given two worlds with small chunks, the second one's sink taking
        // frames on any thread
        WorldHarness harness(transport, WorldConfig::Mode::Launched);
        std::vector<World *> worlds;
        QVERIFY(formPair(harness, sink, Chunk, worlds));
        // When a thread waits on the second one's link while the first sends
        // it a large message
        QVERIFY(sendWhileWaiting(*worlds[0], *worlds[1], *sink, large));
        QMutexLocker lock(&sink->m_mutex);
        QCOMPARE(sink->m_frames.size(), 1);
        // Then that thread delivered it
        QCOMPARE(sink->m_frameThreads, QList<QThread *>{QThread::currentThread()});
        // And it went to the place, or came whole without one
        const Frame &message = sink->m_frames.at(0);
        QCOMPARE(bool(message.header.flags & PlacedPayload), offered);
        QCOMPARE(message.header.count, quint32(large.size()));
        QCOMPARE(offered ? sink->m_place : message.payload, large);
        // And, placed, it was reported after every chunk but the last, from that thread
        const qsizetype reports = offered ? large.size() / Chunk : 0;
        QCOMPARE(sink->m_progress.size(), reports);
        for (qsizetype i = 0; i < reports; ++i)
            QCOMPARE(sink->m_progress.at(i), std::make_pair(qint64(Chunk) * (i + 1), QThread::currentThread()));
    }

    // The progress thread finishes a message a waiting thread began (here:
    // the sink stops taking frames on other threads halfway through).
    void theEngineFinishesAMessageTheWaiterBegan()
    {
        const QByteArray large = pattern(1'000'000);
        auto sink = std::make_shared<WaiterSink>(large.size());
        sink->m_takeHereUpTo = 4 * Chunk;
        WorldHarness harness(QStringLiteral("tcp"), WorldConfig::Mode::Launched);
        std::vector<World *> worlds;
        QVERIFY(formPair(harness, sink, Chunk, worlds));
        QVERIFY(sendWhileWaiting(*worlds[0], *worlds[1], *sink, large));
        QMutexLocker lock(&sink->m_mutex);
        QCOMPARE(sink->m_frames.size(), 1);
        // Then the message is whole in its place, delivered by the progress thread
        QVERIFY(sink->m_frames.at(0).header.flags & PlacedPayload);
        QCOMPARE(sink->m_place, large);
        QVERIFY(sink->m_frameThreads.at(0) != QThread::currentThread());
        // And every chunk but the last was reported once, in order: the first
        // four by the waiting thread, the rest by the progress thread
        const qsizetype reports = large.size() / Chunk;
        QCOMPARE(sink->m_progress.size(), reports);
        for (qsizetype i = 0; i < reports; ++i) {
            QCOMPARE(sink->m_progress.at(i).first, qint64(Chunk) * (i + 1));
            QCOMPARE(sink->m_progress.at(i).second == QThread::currentThread(), i < 4);
        }
    }
};

QTEST_GUILESS_MAIN(TestPlacement)
#include "tst_placement.moc"
