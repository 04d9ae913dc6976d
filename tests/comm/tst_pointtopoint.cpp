// Point-to-point messaging through the public Communicator API, between
// Worlds formed in this process (each with its own progress thread).
#include "commworld.h"
#include "worldharness.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/packer.h>
#include <mmpi/comm/unpacker.h>

#include <QCoroTask>
#include <QElapsedTimer>
#include <QDataStream>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <functional>

#include <array>
#include <atomic>
#include <cmath>
#include <limits>

using namespace mmpi;
using mmpi::test::CommWorld;

namespace {

struct Player
{
    QString name;
    qint32 score = 0;
    bool operator==(const Player &) const = default;
};
QDataStream &operator<<(QDataStream &s, const Player &p) { return s << p.name << p.score; }
QDataStream &operator>>(QDataStream &s, Player &p) { return s >> p.name >> p.score; }


// The error of a failed result, for QVERIFY2 messages (evaluated either way).
template<typename R>
QString problem(const R &result)
{
    return result ? QString() : result.error().toString();
}

template<typename T>
QList<T> edgeValues()
{
    if constexpr (std::is_same_v<T, bool>)
        return {true, false, true};
    else if constexpr (std::is_floating_point_v<T>)
        return {T(0), T(-0.0), std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::max(),
                std::numeric_limits<T>::lowest(), std::numeric_limits<T>::infinity(), T(1.5)};
    else
        return {T(0), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(1)};
}

template<typename T>
bool sameItems(const QList<T> &a, const QList<T> &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            if (std::signbit(a[i]) != std::signbit(b[i]) || (std::isnan(a[i]) != std::isnan(b[i]))
                || (!std::isnan(a[i]) && a[i] != b[i]))
                return false;
        } else if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

// Every rank sends `edgeValues<T>()` plus its rank to every rank (itself
// included) on `tag`, then receives from each source in turn.
template<typename T>
QString exchangeAll(const CommWorld &w, int tag)
{
    QList<Request> sends;
    for (int s = 0; s < w.size(); ++s)
        for (int d = 0; d < w.size(); ++d) {
            QList<T> items = edgeValues<T>();
            items.append(T(s % 2 == 1));
            sends.append(w[s].isend(d, tag, items));
        }
    for (int d = 0; d < w.size(); ++d)
        for (int s = 0; s < w.size(); ++s) {
            QList<T> expected = edgeValues<T>();
            expected.append(T(s % 2 == 1));
            auto got = w[d].recv<QList<T>>(s, tag).wait();
            if (!got)
                return got.error().toString();
            if (!sameItems(*got, expected))
                return QStringLiteral("%1 -> %2: wrong %3 items").arg(s).arg(d).arg(itemTypeName(ItemTraits<T>::type));
        }
    if (auto ok = Request::waitAll(sends); !ok)
        return ok.error().toString();
    return {};
}

// Parameters by value: a coroutine frame outlives the caller's temporaries.
QCoro::Task<QString> awaitPingSendPong(Communicator comm, QThread **resumedOn)
{
    const auto got = co_await comm.recv<QString>(0, 3);
    *resumedOn = QThread::currentThread();
    const auto sent = co_await comm.send(0, 4, QStringLiteral("pong"));
    co_return got && sent ? *got : got ? sent.error().message : got.error().message;
}

} // namespace

class TestPointToPoint : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyItemTypeBetweenEveryPair_data();
    void everyItemTypeBetweenEveryPair();
    void qtTypes();
    void anySourceAnyTag();
    void orderUnderInterleavedSenders();
    void largeMessageOvertakenBySmallOne();
    void chunkedAndSmallMessagesKeepTheirOrder();
    void blockingRoundTripsFromTwoThreads();
    void unexpectedMessagesAreBounded_data();
    void unexpectedMessagesAreBounded();
    void truncationAndTypeMismatch();
    void packedRecord();
    void cancel();
    void probeAndWatchers();
    void coroutineResumesOnAwaitingThread();
    void peerDiesWhileReceivePosted();
    void badArguments();
};

void TestPointToPoint::everyItemTypeBetweenEveryPair_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<int>("size");
    for (const char *t : {"local", "tcp"})
        for (int n : {1, 2, 3, 7})
            QTest::addRow("%s-%d", t, n) << QString::fromLatin1(t) << n;
}

void TestPointToPoint::everyItemTypeBetweenEveryPair()
{
    QFETCH(QString, transport);
    QFETCH(int, size);
    // Given a formed world
    CommWorld w(transport, size);
    QVERIFY(w.formed());
    // When every rank sends every item type to every rank, Then each arrives intact
    QCOMPARE(exchangeAll<bool>(w, 1), QString());
    QCOMPARE(exchangeAll<qint8>(w, 2), QString());
    QCOMPARE(exchangeAll<quint8>(w, 3), QString());
    QCOMPARE(exchangeAll<qint16>(w, 4), QString());
    QCOMPARE(exchangeAll<quint16>(w, 5), QString());
    QCOMPARE(exchangeAll<qint32>(w, 6), QString());
    QCOMPARE(exchangeAll<qint64>(w, 7), QString());
    QCOMPARE(exchangeAll<char16_t>(w, 8), QString());
    QCOMPARE(exchangeAll<float>(w, 9), QString());
    QCOMPARE(exchangeAll<double>(w, 10), QString());
}

void TestPointToPoint::qtTypes()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a QString with non-ASCII text, bytes, a single value and a custom type
    const QString text = QStringLiteral("Grüße, 世界 \U0001F600 \uFFFF");
    const QByteArray bytes("\x00\xff binary", 9);
    const Player player{QStringLiteral("Ada"), 42};
    QVERIFY(w[0].send(1, 1, text).wait());
    QVERIFY(w[0].send(1, 2, bytes).wait());
    QVERIFY(w[0].send(1, 3, qint32(-7)).wait());
    QVERIFY(w[0].send(1, 4, player).wait());
    const QList<quint16> units{0, 65535};
    QVERIFY(w[0].send(1, 5, std::span<const quint16>(units)).wait());
    // Then each comes back as it was sent
    QCOMPARE(*w[1].recv<QString>(0, 1).wait(), text);
    QCOMPARE(*w[1].recv<QByteArray>(0, 2).wait(), bytes);
    QCOMPARE(*w[1].recv<qint32>(0, 3).wait(), -7);
    QCOMPARE(*w[1].recv<Player>(0, 4).wait(), player);
    QCOMPARE(*w[1].recv<QList<quint16>>(0, 5).wait(), units);
}

void TestPointToPoint::anySourceAnyTag()
{
    CommWorld w(QStringLiteral("tcp"), 3);
    QVERIFY(w.formed());
    // Given receives posted before anything is sent, with wildcards
    Request anyTagFrom2 = w[0].irecv(2, AnyTag);
    Request anyFromTag5 = w[0].irecv(AnySource, 5);
    // When rank 1 sends on tag 5 and rank 2 on tag 9
    QVERIFY(w[1].send(0, 5, QStringLiteral("one")).wait());
    QVERIFY(w[2].send(0, 9, QStringLiteral("two")).wait());
    // Then each wildcard receive gets the message it matches, with its status
    const auto s1 = anyFromTag5.wait();
    QVERIFY(s1);
    QCOMPARE(s1->source, 1);
    QCOMPARE(s1->tag, 5);
    QCOMPARE(s1->itemType, ItemType::Char);
    QCOMPARE(s1->count, 3u);
    QCOMPARE(*anyFromTag5.value<QString>(), QStringLiteral("one"));
    const auto s2 = anyTagFrom2.wait();
    QVERIFY(s2);
    QCOMPARE(s2->tag, 9);
    QCOMPARE(*anyTagFrom2.value<QString>(), QStringLiteral("two"));
}

void TestPointToPoint::orderUnderInterleavedSenders()
{
    CommWorld w(QStringLiteral("tcp"), 4);
    QVERIFY(w.formed());
    // Given three senders, each sending 3,334 numbered messages on two tags, interleaved
    constexpr int PerSender = 3334;
    QList<Request> sends;
    for (int i = 0; i < PerSender; ++i)
        for (int s = 1; s < 4; ++s)
            sends.append(w[s].isend(0, i % 2, qint32(i)));
    // When rank 0 receives all 10,002 with AnySource/AnyTag
    QHash<QPair<int, int>, qint32> last;
    for (int n = 0; n < PerSender * 3; ++n) {
        Request r = w[0].irecv(AnySource, AnyTag);
        const auto status = r.wait();
        QVERIFY2(status, qPrintable(problem(status)));
        const qint32 value = *r.value<qint32>();
        // Then per (source, tag) they arrive in the order sent
        const auto key = qMakePair(status->source, status->tag);
        const qint32 previous = last.value(key, status->tag - 2);
        QVERIFY2(value == previous + 2, qPrintable(QStringLiteral("source %1 tag %2: %3 after %4")
                                                       .arg(key.first).arg(key.second).arg(value).arg(previous)));
        last[key] = value;
    }
    QVERIFY(Request::waitAll(sends));
    QVERIFY(!w[0].iprobe());
}

void TestPointToPoint::largeMessageOvertakenBySmallOne()
{
    CommWorld w(QStringLiteral("tcp"), 2);
    QVERIFY(w.formed());
    // Given a 64 MiB message on tag 1, then a small one on tag 2
    QList<qint32> big(16 * 1024 * 1024);
    for (qsizetype i = 0; i < big.size(); ++i)
        big[i] = qint32(i * 2654435761u);
    Request bigSend = w[0].isend(1, 1, big);
    Request smallSend = w[0].isend(1, 2, QStringLiteral("hi"));
    // When the receiver waits for the small one
    QCOMPARE(*w[1].recv<QString>(0, 2).wait(), QStringLiteral("hi"));
    // Then it arrived while the big one was still on its way
    QVERIFY2(!w[1].iprobe(0, 1), "the 64 MiB message arrived before the small one");
    // And the big one arrives whole
    const auto got = w[1].recv<QList<qint32>>(0, 1).wait();
    QVERIFY2(got, qPrintable(problem(got)));
    QVERIFY(*got == big);
    QVERIFY(bigSend.wait());
    QVERIFY(smallSend.wait());
}

// A receiver blocked in wait() reads its links itself but hands chunked
// messages to the progress thread: a small message sent after a chunked one
// on the same tag must still come second.
void TestPointToPoint::chunkedAndSmallMessagesKeepTheirOrder()
{
    CommWorld w(QStringLiteral("tcp"), 2, [](WorldConfig &config) { config.chunkSize = 4096; });
    QVERIFY(w.formed());
    // Given a sender alternating messages of 1 to 40 chunks and single
    // small ones on one tag, each message filled with its number
    constexpr int Messages = 120;
    const auto sizeOf = [](int n) { return n % 2 ? 3 : 1 + (n * 7919) % (40 * 1024); };
    std::atomic<int> failedSends = 0;
    std::unique_ptr<QThread> sender(QThread::create([&w, &failedSends, sizeOf] {
        for (int n = 0; n < Messages; ++n)
            if (!w[0].send(1, 5, QList<qint32>(sizeOf(n), n)).wait())
                ++failedSends;
    }));
    sender->start();
    // When the receiver takes them one by one with blocking receives
    for (int n = 0; n < Messages; ++n) {
        const auto got = w[1].recv<QList<qint32>>(0, 5).wait();
        QVERIFY2(got, qPrintable(problem(got)));
        // Then each is the next one sent, whole
        QVERIFY2(*got == QList<qint32>(sizeOf(n), n),
                 qPrintable(QStringLiteral("message %1: %2 items, first %3").arg(n).arg(got->size())
                                .arg(got->isEmpty() ? -1 : got->first())));
    }
    QVERIFY(sender->wait(30000));
    QCOMPARE(failedSends.load(), 0);
}

// Rank 1 echoes every message back; it runs on its own thread.
void echo(Communicator comm, int rounds, std::atomic<int> *done)
{
    std::array<qint32, 4> buffer{};
    for (int i = 0; i < rounds; ++i) {
        if (!comm.recv(std::span<qint32>(buffer), 0, 1).wait()
            || !comm.send(0, 2, std::span<const qint32>(buffer)).wait())
            return;
        done->store(i + 1);
    }
}

void TestPointToPoint::blockingRoundTripsFromTwoThreads()
{
    // Many short waits on both sides: a completion that loses its wake-up
    // leaves one side asleep for good, which this catches as a hang.
    constexpr int Rounds = 20000;
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    std::atomic<int> echoed = 0;
    std::unique_ptr<QThread> peer(QThread::create(echo, w[1], Rounds, &echoed));
    peer->start();
    std::array<qint32, 4> ping{1, 2, 3, 4};
    std::array<qint32, 4> pong{};
    int completed = 0;
    QElapsedTimer clock;
    clock.start();
    for (; completed < Rounds && clock.elapsed() < 120000; ++completed) {
        ping[0] = completed;
        const auto sent = w[0].send(1, 1, std::span<const qint32>(ping)).wait();
        const auto got = w[0].recv(std::span<qint32>(pong), 1, 2).wait();
        if (!sent || !got || pong != ping)
            break;
    }
    QVERIFY(peer->wait(10000));
    QCOMPARE(completed, Rounds);
    QCOMPARE(echoed.load(), Rounds);
}

void TestPointToPoint::unexpectedMessagesAreBounded_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("tcp") << QStringLiteral("tcp");
    QTest::newRow("local") << QStringLiteral("local");
}

void TestPointToPoint::unexpectedMessagesAreBounded()
{
    QFETCH(QString, transport);
    constexpr qint64 Limit = 256 * 1024;
    constexpr int MessageSize = 64 * 1024;
    constexpr int Messages = 800; // 50 MiB: more than every buffer on the way
    CommWorld w(transport, 2, [](WorldConfig &c) { c.maxUnexpectedBytes = Limit; });
    QVERIFY(w.formed());
    // Given rank 1 floods rank 0 with messages nobody receives yet, then sends
    // one more on another tag
    QList<Request> sends;
    for (int i = 0; i < Messages; ++i)
        sends.append(w[1].isend(0, 7, QByteArray(MessageSize, char(i % 251))));
    Request last = w[1].isend(0, 8, QStringLiteral("behind the flood"));
    const auto completed = [&] {
        return std::count_if(sends.begin(), sends.end(), [](const Request &r) { return r.isFinished(); });
    };
    // When rank 0 has buffered up to its limit and rank 1's progress settles
    QVERIFY(QTest::qWaitFor([&] { return w[0].unexpectedBytes() >= Limit; }, 20000));
    qsizetype before = -1;
    for (int i = 0; i < 100 && completed() != before; ++i) {
        before = completed();
        QTest::qWait(100);
    }
    // Then rank 0 holds no more than the limit and one message, and rank 1's
    // sends are held back by flow control instead
    QVERIFY2(w[0].unexpectedBytes() <= Limit + MessageSize,
             qPrintable(QString::number(w[0].unexpectedBytes())));
    QVERIFY2(completed() < Messages, "every send completed: nothing slowed the sender");
    // And a receive for the message behind the flood still gets it
    const auto behind = w[0].recv<QString>(1, 8).wait();
    QVERIFY2(behind, qPrintable(problem(behind)));
    QCOMPARE(*behind, QStringLiteral("behind the flood"));
    // And every flooded message arrives, whole and in order
    for (int i = 0; i < Messages; ++i) {
        const auto got = w[0].recv<QByteArray>(1, 7).wait();
        QVERIFY2(got, qPrintable(problem(got)));
        QCOMPARE(got->size(), MessageSize);
        QCOMPARE(got->front(), char(i % 251));
        QCOMPARE(got->back(), char(i % 251));
    }
    QVERIFY(Request::waitAll(sends));
    QVERIFY(last.wait());
    QCOMPARE(w[0].unexpectedBytes(), 0);
}

void TestPointToPoint::truncationAndTypeMismatch()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given ten Int items and some doubles
    QVERIFY(w[0].send(1, 1, QList<qint32>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).wait());
    QVERIFY(w[0].send(1, 2, QList<double>{1.5}).wait());
    // When received into a buffer of four
    std::array<qint32, 4> small{};
    const auto truncated = w[1].recv(std::span<qint32>(small), 0, 1).wait();
    // Then it is a truncation error naming both sizes
    QVERIFY(!truncated);
    QCOMPARE(truncated.error().code, ErrorCode::TruncatedPayload);
    QVERIFY2(truncated.error().message.contains(QLatin1String("10")) && truncated.error().message.contains(QLatin1String("4")),
             qPrintable(truncated.error().message));
    // When doubles are received as Int
    const auto mismatch = w[1].recv<QList<qint32>>(0, 2).wait();
    // Then the error names both types
    QVERIFY(!mismatch);
    QCOMPARE(mismatch.error().code, ErrorCode::TypeMismatch);
    QVERIFY2(mismatch.error().message.contains(QLatin1String("Double")) && mismatch.error().message.contains(QLatin1String("Int")),
             qPrintable(mismatch.error().message));
    // And a buffer that fits receives in place
    QVERIFY(w[0].send(1, 3, QList<qint32>{7, 8}).wait());
    const auto fits = w[1].recv(std::span<qint32>(small), 0, 3).wait();
    QVERIFY(fits);
    QCOMPARE(fits->count, 2u);
    QCOMPARE(small[0], 7);
    QCOMPARE(small[1], 8);
}

void TestPointToPoint::packedRecord()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a heterogeneous record packed into one message
    Packer packer;
    packer.pack(qint32(3)).pack(QList<double>{1.0, 2.5}).pack(QStringLiteral("name"));
    QVERIFY(w[0].send(1, 1, packer.buffer()).wait());
    // Then it unpacks in order with types checked
    Unpacker unpacker(*w[1].recv<QByteArray>(0, 1).wait());
    QCOMPARE(*unpacker.unpackValue<qint32>(), 3);
    const auto wrong = unpacker.unpackString();
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code, ErrorCode::TypeMismatch);
    QCOMPARE(*unpacker.unpack<double>(), (QList<double>{1.0, 2.5}));
    QCOMPARE(*unpacker.unpackString(), QStringLiteral("name"));
    QVERIFY(unpacker.atEnd());
    QVERIFY(!unpacker.unpackValue<qint32>());
}

void TestPointToPoint::cancel()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a posted receive that nothing matches yet
    Request r = w[1].irecv(0, 4);
    // When it is cancelled
    QVERIFY(r.cancel());
    // Then it finishes as cancelled, cannot be cancelled twice, and a later
    // message goes to the next receive instead
    const auto outcome = r.wait();
    QVERIFY(!outcome);
    QCOMPARE(outcome.error().code, ErrorCode::Cancelled);
    QVERIFY(!r.cancel());
    QVERIFY(w[0].send(1, 4, qint64(99)).wait());
    QCOMPARE(*w[1].recv<qint64>(0, 4).wait(), 99);
}

void TestPointToPoint::probeAndWatchers()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given nothing sent, iprobe finds nothing and a watcher waits
    QVERIFY(!w[1].iprobe(0, 6));
    Request r = w[1].irecv(0, 7);
    RequestWatcher watcher;
    QSignalSpy finished(&watcher, &RequestWatcher::finished);
    watcher.setRequest(r);
    QVERIFY(!Request::testAll({r}));
    // When messages arrive
    QVERIFY(w[0].send(1, 6, QList<float>{1, 2, 3}).wait());
    QVERIFY(w[0].send(1, 7, QStringLiteral("x")).wait());
    // Then probe reports the waiting one without taking it, and the watcher fires
    const auto status = w[1].probe(0, 6);
    QVERIFY(status);
    QCOMPARE(status->count, 3u);
    QCOMPARE(status->itemType, ItemType::Float);
    QCOMPARE(status->bytes, 12);
    QVERIFY(w[1].iprobe(0, 6));
    QTRY_COMPARE(finished.size(), 1);
    QVERIFY(Request::testAll({r}));
    QCOMPARE(Request::waitAny({w[1].irecv(0, 99), r}), 1);
    QCOMPARE(*w[1].recv<QList<float>>(0, 6).wait(), (QList<float>{1, 2, 3}));
}

void TestPointToPoint::coroutineResumesOnAwaitingThread()
{
    CommWorld w(QStringLiteral("tcp"), 2);
    QVERIFY(w.formed());
    QThread *const mine = QThread::currentThread();
    QThread *resumedOn = nullptr;
    // Given a coroutine that awaits a receive, then a send, on this thread
    QCoro::Task<QString> task = awaitPingSendPong(w[1], &resumedOn);
    // When the message arrives on the progress thread
    QVERIFY(w[0].send(1, 3, QStringLiteral("ping")).wait());
    // Then the coroutine resumes here, on the thread that awaited, not the progress thread
    QCOMPARE(QCoro::waitFor(task), QStringLiteral("ping"));
    QCOMPARE(resumedOn, mine);
    QCOMPARE(*w[0].recv<QString>(1, 4).wait(), QStringLiteral("pong"));
}

void TestPointToPoint::peerDiesWhileReceivePosted()
{
    CommWorld w(QStringLiteral("tcp"), 3);
    QVERIFY(w.formed());
    // Given receives posted for rank 2 and from anyone
    Request fromTwo = w[0].irecv(2, 1);
    Request fromAny = w[0].irecv(AnySource, 1);
    // When rank 2's process vanishes without a goodbye
    w.kill(2);
    // Then the receive from rank 2 fails (no hang), the wildcard one stays open
    QVERIFY(QTest::qWaitFor([&] { return fromTwo.isFinished(); }, 20000));
    const auto outcome = fromTwo.wait();
    QVERIFY(!outcome);
    QCOMPARE(outcome.error().code, ErrorCode::NodeLost);
    QVERIFY(!fromAny.isFinished());
    // And new receives from the lost rank fail at once, while rank 1 still talks
    QCOMPARE(w[0].irecv(2, 1).wait().error().code, ErrorCode::NodeLost);
    QVERIFY(w[1].send(0, 1, qint32(5)).wait());
    QVERIFY(fromAny.wait());
    QCOMPARE(*fromAny.value<qint32>(), 5);
    QVERIFY(!w[0].send(2, 1, qint32(1)).wait());
}

void TestPointToPoint::badArguments()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    QCOMPARE(w[0].send(5, 1, qint32(1)).wait().error().code, ErrorCode::InvalidRank);
    QCOMPARE(w[0].send(1, -3, qint32(1)).wait().error().code, ErrorCode::InvalidTag);
    QCOMPARE(w[0].irecv(9, 1).wait().error().code, ErrorCode::InvalidRank);
    QCOMPARE(Communicator().send(0, 1, qint32(1)).wait().error().code, ErrorCode::NotFormed);
    // A world that is already past Idle cannot get a communicator: messages may have been missed
    World started;
    WorldConfig bad;
    bad.size = 0;
    started.form(bad);
    const auto refused = Communicator::world(started);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::BadConfiguration);
}

QTEST_GUILESS_MAIN(TestPointToPoint)
#include "tst_pointtopoint.moc"
