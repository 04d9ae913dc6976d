// Reconnection and resume in real worlds (docs/design/resume.md):
// a stream of numbered messages crosses a broken link (sim io-error, NORMAL)
// and an out-of-range window (RANGE) exactly once and in order; a peer out of
// range for longer than the grace period, or whose app has ended, is lost
// with the class and reason; a full replay buffer holds the sender back.
#include "worldharness.h"

#include <mmpi/world/world.h>

#include <QSignalSpy>
#include <QTest>
#include <QtEndian>

#include <atomic>
#include <thread>


using namespace mmpi;
using namespace mmpi::test;
using namespace std::chrono_literals;

namespace {

constexpr int Patience = 20000;

// A Data frame numbered `n` in its first 8 bytes, `size` bytes long.
Frame numbered(qint64 n, qsizetype size = 8)
{
    QByteArray payload(qMax<qsizetype>(size, 8), char(n & 0x7f));
    qToBigEndian<qint64>(n, payload.data());
    return makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload);
}

qint64 numberOf(const Frame &frame)
{
    return frame.payload.size() >= 8 ? qFromBigEndian<qint64>(frame.payload.constData()) : -1;
}

// Everything one world hears: the numbers of its Data frames and its signals.
struct Listener
{
    explicit Listener(World *world)
        : unreachable(world, &World::nodeUnreachable)
        , returned(world, &World::nodeReturned)
        , lost(world, &World::nodeLost)
    {
        QObject::connect(world, &World::frameReceived, world, [this](const Frame &frame) {
            numbers.append(numberOf(frame));
            sizes.append(frame.payload.size());
            const char fill = char(numberOf(frame) & 0x7f);
            if (std::any_of(frame.payload.cbegin() + qMin<qsizetype>(8, frame.payload.size()), frame.payload.cend(),
                            [fill](char c) { return c != fill; }))
                damaged.append(numberOf(frame));
        });
    }
    // The numbers arrived 0, 1, 2, ... `count` - 1, each once; else why not.
    QString checkSequence(qint64 count) const
    {
        if (numbers.size() != count)
            return QStringLiteral("%1 frames arrived, %2 were sent").arg(numbers.size()).arg(count);
        for (qsizetype i = 0; i < numbers.size(); ++i)
            if (numbers.at(i) != i)
                return QStringLiteral("frame %1 arrived where %2 was due").arg(numbers.at(i)).arg(i);
        return {};
    }
    QList<qint64> numbers;
    QList<qsizetype> sizes;
    QList<qint64> damaged; // frames whose bytes are not what was sent
    QSignalSpy unreachable;
    QSignalSpy returned;
    QSignalSpy lost;
};

} // namespace

class TestResume : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ioErrorResumesExactlyOnce();
    void outOfRangeWithinGraceResumes();
    void outOfRangeBeyondGraceIsLost();
    void endedPeerIsLostAtOnce();
    void memberGivenUpByOneIsGivenUpByAll();
    void fullReplayBufferHoldsTheSender();
    void brokenTcpLinkMidChunkResumes_data();
    void brokenTcpLinkMidChunkResumes();

private:
    std::vector<World *> formWorlds(WorldHarness &harness, int n, const QStringList &faults,
                                    std::chrono::milliseconds grace = 10s);
    // The same with a grace period per rank.
    std::vector<World *> formWorlds(WorldHarness &harness, const QStringList &faults,
                                    const std::vector<std::chrono::milliseconds> &graces);
    // Rank 0 sends rank 1 numbered frames from a thread of its own for
    // `duration`, every 50th a fragmented 200 KiB one; returns how many.
    static qint64 stream(World *from, std::chrono::milliseconds duration);
};

std::vector<World *> TestResume::formWorlds(WorldHarness &harness, int n, const QStringList &faults,
                                            std::chrono::milliseconds grace)
{
    return formWorlds(harness, faults, std::vector<std::chrono::milliseconds>(n, grace));
}

std::vector<World *> TestResume::formWorlds(WorldHarness &harness, const QStringList &faults,
                                            const std::vector<std::chrono::milliseconds> &graces)
{
    std::vector<World *> worlds;
    const int n = int(graces.size());
    for (int i = 0; i < n; ++i) {
        WorldConfig config = harness.config(i, n);
        config.heartbeatInterval = 100ms;
        config.heartbeatTimeout = 1000ms;
        config.reconnectGracePeriod = graces[i];
        if (!faults.isEmpty()) {
            config.transportOptions.insert(QStringLiteral("rank"), i);
            config.transportOptions.insert(QStringLiteral("faults"), faults);
        }
        worlds.push_back(harness.start(config));
    }
    const bool formed = QTest::qWaitFor([&] {
        return std::all_of(worlds.begin(), worlds.end(), [](World *w) { return w->state() == World::State::Formed; });
    }, Patience);
    return formed ? worlds : std::vector<World *>{};
}

qint64 TestResume::stream(World *from, std::chrono::milliseconds duration)
{
    std::atomic<qint64> sent = 0;
    std::thread sender([&] {
        const auto end = std::chrono::steady_clock::now() + duration;
        for (qint64 n = 0; std::chrono::steady_clock::now() < end; ++n) {
            if (!from->sendFrame(1, numbered(n, n % 50 == 49 ? 200 * 1024 : 64)))
                return;
            sent = n + 1;
            if (n % 20 == 19)
                std::this_thread::sleep_for(1ms);
        }
    });
    // The main thread's event loop runs meanwhile: the receiver's frames and
    // signals arrive on it.
    QTest::qWait(int(duration.count()));
    sender.join();
    return sent;
}

void TestResume::ioErrorResumesExactlyOnce()
{
    WorldHarness harness(QStringLiteral("sim"), WorldConfig::Mode::Launched);
    harness.addTransportOptions({{QStringLiteral("link"), QStringLiteral("ideal")}});
    const auto worlds = formWorlds(harness, 2, {QStringLiteral("rank 1 io-error at 700ms")});
    QVERIFY(!worlds.empty());
    Listener sender(worlds[0]);
    Listener receiver(worlds[1]);

    // When the link breaks in the middle of a stream of messages
    const qint64 sent = stream(worlds[0], 1500ms);
    QVERIFY(sent > 100);

    // Then both ends report it (NORMAL: a link error) and the return, and
    // every message arrives exactly once, in order; nobody is lost.
    QTRY_VERIFY_WITH_TIMEOUT(receiver.numbers.size() >= sent, Patience);
    QTest::qWait(100); // a duplicate would come now
    const QString problem = receiver.checkSequence(sent);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    for (Listener *l : {&sender, &receiver}) {
        QTRY_COMPARE_WITH_TIMEOUT(l->returned.size(), 1, Patience);
        QVERIFY(l->unreachable.size() >= 1);
        QCOMPARE(l->unreachable.at(0).at(1).value<World::FailureClass>(), World::FailureClass::Normal);
        QCOMPARE(l->lost.size(), 0);
    }
    QCOMPARE(sender.unreachable.at(0).at(0).toInt(), 1);
    QCOMPARE(receiver.unreachable.at(0).at(0).toInt(), 0);
    QCOMPARE(worlds[0]->linkQuality(1)->status, World::NodeStatus::Alive);
    // The big ones crossed as fragments and arrived whole.
    QCOMPARE(receiver.sizes.count(200 * 1024), sent / 50);
}

void TestResume::outOfRangeWithinGraceResumes()
{
    WorldHarness harness(QStringLiteral("sim"), WorldConfig::Mode::Launched);
    harness.addTransportOptions({{QStringLiteral("link"), QStringLiteral("ideal")}});
    const auto worlds = formWorlds(harness, 2, {QStringLiteral("rank 1 out-of-range at 600ms for 1200ms")}, 10s);
    QVERIFY(!worlds.empty());
    Listener sender(worlds[0]);
    Listener receiver(worlds[1]);

    // When rank 1 is out of range for a while in the middle of the stream
    const qint64 sent = stream(worlds[0], 2500ms);

    // Then it comes back within the grace period: unreachable and returned,
    // nothing else, and every message exactly once.
    QTRY_VERIFY_WITH_TIMEOUT(receiver.numbers.size() >= sent, Patience);
    QTest::qWait(100);
    const QString problem = receiver.checkSequence(sent);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    for (Listener *l : {&sender, &receiver}) {
        QTRY_COMPARE_WITH_TIMEOUT(l->returned.size(), 1, Patience);
        QVERIFY(l->unreachable.size() >= 1);
        QCOMPARE(l->lost.size(), 0);
    }
    // Rank 1 dials rank 0 (the higher rank does), and its dials fail while
    // it is away: that is no passing I/O error but RANGE.
    QCOMPARE(receiver.unreachable.last().at(1).value<World::FailureClass>(), World::FailureClass::Range);
}

void TestResume::outOfRangeBeyondGraceIsLost()
{
    WorldHarness harness(QStringLiteral("sim"), WorldConfig::Mode::Launched);
    harness.addTransportOptions({{QStringLiteral("link"), QStringLiteral("ideal")}});
    const auto worlds = formWorlds(harness, 2, {QStringLiteral("rank 1 out-of-range at 300ms for 5s")}, 1000ms);
    QVERIFY(!worlds.empty());
    Listener rank0(worlds[0]);
    Listener rank1(worlds[1]);

    // When rank 1 stays away longer than the 1 s grace period
    // Then each side gives the other up: NODETERM, saying why.
    for (Listener *l : {&rank0, &rank1}) {
        QTRY_COMPARE_WITH_TIMEOUT(l->lost.size(), 1, Patience);
        QCOMPARE(l->unreachable.size() >= 1, true);
        QCOMPARE(l->returned.size(), 0);
        QCOMPARE(l->lost.at(0).at(1).value<World::FailureClass>(), World::FailureClass::NodeTerm);
        const Error reason = l->lost.at(0).at(2).value<Error>();
        QCOMPARE(reason.code, ErrorCode::NodeLost);
        QVERIFY2(reason.message.contains(QStringLiteral("within the 1000 ms grace period")), qPrintable(reason.message));
    }
    QCOMPARE(worlds[0]->linkQuality(1)->status, World::NodeStatus::Lost);
    // Sending to it now fails at once.
    std::atomic<int> failed = 0;
    QVERIFY(worlds[0]->sendFrame(1, numbered(0), [&](const Error &e) { failed = e.isError() ? 1 : 2; }));
    QTRY_COMPARE_WITH_TIMEOUT(failed.load(), 1, Patience);
}

void TestResume::endedPeerIsLostAtOnce()
{
    // Rank 1 of 3 ends without a goodbye: rank 2 (which dials rank 1 again)
    // and rank 0 (which probes its address) both find nothing listening.
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    const auto worlds = formWorlds(harness, 3, {}, 30s);
    QVERIFY(!worlds.empty());
    Listener rank0(worlds[0]);
    Listener rank2(worlds[2]);
    QElapsedTimer clock;
    clock.start();
    harness.destroy(worlds[1]);

    // Long before the 30 s grace period: NODETERM, the app has ended.
    for (Listener *l : {&rank0, &rank2}) {
        QTRY_COMPARE_WITH_TIMEOUT(l->lost.size(), 1, Patience);
        QCOMPARE(l->lost.at(0).at(0).toInt(), 1);
        QCOMPARE(l->lost.at(0).at(1).value<World::FailureClass>(), World::FailureClass::NodeTerm);
        const Error reason = l->lost.at(0).at(2).value<Error>();
        QVERIFY2(reason.message.contains(QStringLiteral("rank 1's app has ended")), qPrintable(reason.message));
        QCOMPARE(l->returned.size(), 0);
    }
    QVERIFY2(clock.elapsed() < 10000, qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(worlds[0]->linkQuality(2)->status, World::NodeStatus::Alive);
}

void TestResume::memberGivenUpByOneIsGivenUpByAll()
{
    // Rank 2 is away for 5 s. Rank 0 waits 1 s for it, rank 1 would wait
    // 30 s and have it back: without one verdict, rank 0 would go on without
    // rank 2 while rank 1 took it back.
    WorldHarness harness(QStringLiteral("sim"), WorldConfig::Mode::Launched);
    harness.addTransportOptions({{QStringLiteral("link"), QStringLiteral("ideal")}});
    const auto worlds = formWorlds(harness, {QStringLiteral("rank 2 out-of-range at 300ms for 5s")}, {1s, 30s, 30s});
    QVERIFY(!worlds.empty());
    Listener rank0(worlds[0]);
    Listener rank1(worlds[1]);
    QElapsedTimer clock;
    clock.start();

    // Then rank 0 gives it up when its grace period ends, and rank 1, told
    // so, gives it up too: long before its own 30 s, and before rank 2 is
    // back in range (when it would have resumed there).
    for (Listener *l : {&rank0, &rank1}) {
        QTRY_COMPARE_WITH_TIMEOUT(l->lost.size(), 1, Patience);
        QCOMPARE(l->lost.at(0).at(0).toInt(), 2);
        QCOMPARE(l->lost.at(0).at(1).value<World::FailureClass>(), World::FailureClass::NodeTerm);
    }
    QVERIFY2(clock.elapsed() < 4500, qPrintable(QString::number(clock.elapsed())));
    const Error told = rank1.lost.at(0).at(2).value<Error>();
    QCOMPARE(told.code, ErrorCode::NodeLost);
    QVERIFY2(told.message.startsWith(QStringLiteral("rank 0 gave rank 2 up: no link to rank 2 again within the 1000 ms")),
             qPrintable(told.message));
    // Rank 2's return finds a world that has moved on: neither takes it
    // back, and 0 and 1 still hold each other.
    QTest::qWait(5500);
    for (int r : {0, 1}) {
        QCOMPARE(worlds[r]->linkQuality(2)->status, World::NodeStatus::Lost);
        QCOMPARE(worlds[r]->linkQuality(1 - r)->status, World::NodeStatus::Alive);
    }
    QCOMPARE(rank0.returned.size(), 0);
    QCOMPARE(rank1.returned.size(), 0);
}

void TestResume::fullReplayBufferHoldsTheSender()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    std::vector<World *> worlds;
    constexpr int Chunk = 4096;
    constexpr qint64 Replay = 4 * (Chunk + FrameHeaderSize); // the smallest allowed
    for (int i = 0; i < 2; ++i) {
        WorldConfig config = harness.config(i, 2);
        config.chunkSize = Chunk;
        config.replayBufferSize = Replay;
        worlds.push_back(harness.start(config));
    }
    QTRY_VERIFY_WITH_TIMEOUT(worlds[0]->state() == World::State::Formed && worlds[1]->state() == World::State::Formed,
                             Patience);
    Listener receiver(worlds[1]);

    // When rank 1 stops reading and rank 0 sends 100 frames of 4000 bytes
    worlds[1]->setReceiving(0, false);
    QTest::qWait(50);
    std::atomic<int> handedOver = 0;
    constexpr int Count = 100;
    for (int n = 0; n < Count; ++n)
        QVERIFY(worlds[0]->sendFrame(1, numbered(n, 4000), [&](const Error &e) {
            if (!e.isError())
                ++handedOver;
        }));
    QTest::qWait(500);

    // Then only what the replay buffer holds went out (the socket buffers
    // between would take far more): the rest waits for acks.
    const int early = handedOver.load();
    QVERIFY2(early >= 1 && early <= int(Replay / 4000) + 1, qPrintable(QString::number(early)));

    // And once rank 1 reads again, everything arrives, in order.
    worlds[1]->setReceiving(0, true);
    QTRY_COMPARE_WITH_TIMEOUT(handedOver.load(), Count, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(receiver.numbers.size(), Count, Patience);
    const QString problem = receiver.checkSequence(Count);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

// Large messages cross tcp in chunks that the receiver reads straight into
// the message it reassembles. A link broken in the middle of one (the
// sockets shut down under both worlds) resumes on a new link: every message
// arrives once, in order, with every byte as sent. Up to 1 MiB the sending
// thread writes the chunks itself, above it the progress thread does. A
// borrowed payload (a view of the sender's buffer, overwritten as soon as
// the send returns) must be resent from the copy kept, not from the view.
void TestResume::brokenTcpLinkMidChunkResumes_data()
{
    QTest::addColumn<qsizetype>("big");
    QTest::addColumn<bool>("borrowed");
    QTest::newRow("3 MiB, through the progress thread") << qsizetype(3 * 1024 * 1024 + 123) << false;
    QTest::newRow("700 KiB, from the sending thread") << qsizetype(700 * 1024 + 45) << false;
    QTest::newRow("700 KiB, borrowed") << qsizetype(700 * 1024 + 45) << true;
    QTest::newRow("3 MiB, borrowed") << qsizetype(3 * 1024 * 1024 + 123) << true;
}

void TestResume::brokenTcpLinkMidChunkResumes()
{
    QFETCH(qsizetype, big);
    QFETCH(bool, borrowed);
    WorldHarness harness(QStringLiteral("tcp"), WorldConfig::Mode::Launched);
    std::vector<World *> worlds;
    for (int i = 0; i < 2; ++i) {
        WorldConfig config = harness.config(i, 2);
        config.chunkSize = 64 * 1024;
        config.reconnectGracePeriod = 10s;
        worlds.push_back(harness.start(config));
    }
    QTRY_VERIFY_WITH_TIMEOUT(worlds[0]->state() == World::State::Formed && worlds[1]->state() == World::State::Formed,
                             Patience);
    Listener receiver(worlds[1]);
    constexpr int Count = 60;
    const qsizetype Big = big;
    std::atomic<int> sent = 0;
    std::thread sender([&] {
        for (int n = 0; n < Count; ++n) {
            Frame frame = numbered(n, n % 3 == 0 ? 100 : Big);
            QByteArray own = std::exchange(frame.payload, {});
            frame.payload = borrowed ? QByteArray::fromRawData(own.constData(), own.size()) : own;
            if (!worlds[0]->sendFrame(1, std::move(frame)))
                return;
            own.fill('\xee'); // the sender's buffer, reused
            ++sent;
            std::this_thread::sleep_for(2ms);
        }
    });
    QTRY_VERIFY_WITH_TIMEOUT(receiver.numbers.size() >= Count / 3, Patience);
    const int broken = WorldHarness::breakTcpLinks();
    QVERIFY(broken >= 1); // the other end may close its socket first
    QTRY_VERIFY_WITH_TIMEOUT(receiver.numbers.size() >= Count, Patience);
    sender.join();
    QCOMPARE(sent.load(), Count);
    QTest::qWait(100); // a duplicate would come now
    const QString problem = receiver.checkSequence(Count);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY2(receiver.damaged.isEmpty(), qPrintable(QStringLiteral("%1 damaged").arg(receiver.damaged.size())));
    QCOMPARE(receiver.sizes.count(Big), Count - Count / 3);
    QVERIFY(receiver.unreachable.size() >= 1);
    QTRY_VERIFY_WITH_TIMEOUT(receiver.returned.size() >= 1, Patience);
    QCOMPARE(receiver.lost.size(), 0);
}

QTEST_GUILESS_MAIN(TestResume)
#include "tst_resume.moc"
