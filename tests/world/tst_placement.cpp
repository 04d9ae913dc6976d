// A large message of fixed-size items is written to the place its receiver
// offers as it arrives (MessageSink::placeFor), also when the receiver offers
// one only after the first chunks came, and the receiver hears after each
// chunk how far it has come (handlePlacedProgress): what it is told is there
// is there.
#include "worldharness.h"

#include <QMutex>
#include <QSemaphore>
#include <QTest>

#include <algorithm>
#include <cstring>

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
};

QTEST_GUILESS_MAIN(TestPlacement)
#include "tst_placement.moc"
