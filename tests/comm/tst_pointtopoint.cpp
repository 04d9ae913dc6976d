// Point-to-point messaging through the public Communicator API, between
// Worlds formed in this process (each with its own progress thread).
#include "coroutinetest.h"
#include "commworld.h"
#include "notelog.h"

#include "worldharness.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/packer.h>
#include <mmpi/comm/unpacker.h>
#include <mmpi/wire/bufferpool.h>

#include <QCoroTask>
#include <QElapsedTimer>
#include <QDataStream>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QtEndian>

#include <functional>

#include <array>
#include <atomic>
#include <cmath>
#include <limits>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::NoteLog;

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

// The point-to-point matcher's note of a large message written straight
// into a posted receive's buffer.
class PlacementLog : public NoteLog
{
public:
    PlacementLog() : NoteLog(QLatin1String("into the receive's own buffer")) {}
    int placed() const { return count(); }
};

template<typename T>
QList<T> numbered(qsizetype n)
{
    QList<T> items(n);
    for (qsizetype i = 0; i < n; ++i)
        items[i] = T(i * 7 + 3);
    return items;
}

// Rank 0 sends rank 1 `items` on tag 7 while rank 1 has a receive posted
// into a buffer a little larger, whose tail must stay as it was.
template<typename T>
QString sendIntoPostedBuffer(const CommWorld &w, const QList<T> &items)
{
    constexpr qsizetype Spare = 5;
    QList<T> buffer(items.size() + Spare, T(-1));
    Request receive = w[1].irecv(std::span<T>(buffer.data(), size_t(buffer.size())), 0, 7);
    if (auto sent = w[0].send(1, 7, std::span<const T>(items.constData(), size_t(items.size()))).wait(); !sent)
        return sent.error().toString();
    const auto status = receive.wait();
    if (!status)
        return status.error().toString();
    if (status->count != quint32(items.size()) || status->source != 0 || status->tag != 7)
        return QStringLiteral("status: %1 items from %2 on tag %3").arg(status->count).arg(status->source).arg(status->tag);
    if (buffer.first(items.size()) != items)
        return QStringLiteral("the items in the buffer differ from those sent");
    if (buffer.last(Spare) != QList<T>(Spare, T(-1)))
        return QStringLiteral("the buffer was written past the message");
    return {};
}

// The Fragment frames a sender cuts a message of bytes into on the world
// communicator (docs/design/protocol.md), so that a test can send part of one.
QList<Frame> fragmentsOf(const QList<quint8> &items, int tag, qsizetype chunk)
{
    const QByteArray bytes(reinterpret_cast<const char *>(items.constData()), items.size());
    QList<Frame> fragments;
    for (qsizetype offset = 0; offset < bytes.size(); offset += chunk) {
        Frame f;
        f.header.kind = FrameKind::Fragment;
        f.header.itemType = ItemType::UnsignedByte;
        f.header.count = quint32(bytes.size());
        f.header.tag = tag;
        f.header.flags = (offset == 0 ? FirstFragment : 0) | (offset + chunk >= bytes.size() ? LastFragment : 0);
        if (offset == 0) {
            f.payload.resize(FragmentLengthSize);
            qToBigEndian<quint64>(quint64(bytes.size()), f.payload.data());
        }
        f.payload.append(bytes.mid(offset, chunk));
        fragments.append(f);
    }
    return fragments;
}

// Two ranks over tcp; rank 1 has a receive posted into a buffer for a
// message of bytes that the test sends rank 1 fragment by fragment.
struct PartlySentMessage
{
    explicit PartlySentMessage(std::chrono::milliseconds reconnectGrace)
        : world(QStringLiteral("tcp"), 2, [reconnectGrace](WorldConfig &config) {
              config.chunkSize = 64 * 1024;
              config.reconnectGracePeriod = reconnectGrace;
          }),
          sent(numbered<quint8>(1024 * 1024 + 17)), fragments(fragmentsOf(sent, 3, 64 * 1024)),
          buffer(sent.size()), receive(world[1].irecv(std::span<quint8>(buffer.data(), size_t(buffer.size())), 0, 3))
    {
    }
    // Fragments [from, to) from rank 0.
    bool send(qsizetype from, qsizetype to) const
    {
        for (qsizetype i = from; i < to; ++i)
            if (!world.world(0)->sendFrame(1, fragments[i]))
                return false;
        return true;
    }

    CommWorld world;
    const QList<quint8> sent;
    const QList<Frame> fragments;
    QList<quint8> buffer;
    Request receive;
};

// Parameters by value: a coroutine frame outlives the caller's temporaries.
QCoro::Task<QString> awaitPingSendPong(Communicator comm, QThread **resumedOn)
{
    const auto got = co_await comm.recv<QString>(0, 3);
    *resumedOn = QThread::currentThread();
    const auto sent = co_await comm.send(0, 4, QStringLiteral("pong"));
    co_return got && sent ? *got : got ? sent.error().message : got.error().message;
}

// One row per socket transport, for the tests that run on both.
void addTransportRows()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("tcp") << QStringLiteral("tcp");
    QTest::newRow("local") << QStringLiteral("local");
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
    void reusedSendBufferChangesNothingSent_data();
    void reusedSendBufferChangesNothingSent();
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
    void smallSendFinishesAsItIsPosted();
    void badArguments();
    void largeMessagesGoStraightIntoPostedBuffers_data();
    void largeMessagesGoStraightIntoPostedBuffers();
    void wholeMessagesAreCopiedIntoPostedBuffers_data();
    void wholeMessagesAreCopiedIntoPostedBuffers();
    void postedBufferErrors();
    void itemsArriveInEitherByteOrder_data();
    void itemsArriveInEitherByteOrder();
    void postedBufferOnASplitCommunicator();
    void closingAWorldEmptiesTheBufferPool();
    void secondCloseLetsTheFirstFinishSending();
    void closeWaitsWhileQueuedBytesLeave();
    void linkBreaksWhileMessageGoesIntoBuffer();
    void peerLostWhileMessageGoesIntoBuffer();
    void malformedMessageIntoBufferFailsItsReceive_data();
    void malformedMessageIntoBufferFailsItsReceive();
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
    // Given a 64 MiB message on tag 1, then a small one on tag 2, both sent
    // while the receiver reads nothing: the socket buffers between (at most
    // 16 MiB here) hold the start of the big one, the rest waits queued at
    // the sender, whatever the machine's speed
    QList<qint32> big(16 * 1024 * 1024);
    for (qsizetype i = 0; i < big.size(); ++i)
        big[i] = qint32(i * 2654435761u);
    w.world(1)->setReceiving(0, false);
    Request bigSend = w[0].isend(1, 1, big);
    Request smallSend = w[0].isend(1, 2, QStringLiteral("hi"));
    // When the receiver reads again and waits for the small one
    w.world(1)->setReceiving(0, true);
    QCOMPARE(*w[1].recv<QString>(0, 2).wait(), QStringLiteral("hi"));
    // Then it came before the rest of the big one, which is still on its way
    QVERIFY2(!w[1].iprobe(0, 1), "the 64 MiB message arrived before the small one");
    // And the big one arrives whole
    const auto got = w[1].recv<QList<qint32>>(0, 1).wait();
    QVERIFY2(got, qPrintable(problem(got)));
    QVERIFY(*got == big);
    QVERIFY(bigSend.wait());
    QVERIFY(smallSend.wait());
}

// Items are written from the sender's own buffer, with no encoding copy
// (Communicator::isend): whatever the socket or the replay buffer keeps
// must be a copy by the time send() completes, so a buffer reused at once
// changes nothing sent. Small socket buffers make the link keep most bytes.
void TestPointToPoint::reusedSendBufferChangesNothingSent_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<int>("socketBuffer"); // 0: the transport's default
    for (const char *t : {"local", "tcp"}) {
        QTest::addRow("%s", t) << QString::fromLatin1(t) << 0;
        QTest::addRow("%s, 16 KiB socket buffers", t) << QString::fromLatin1(t) << 16 * 1024;
    }
}

namespace {

// Sends messages of T from 1 item to about 3 MiB from one buffer that is
// overwritten as soon as each send completes (as a span, or as the QList
// itself, which the message shares); empty if every message arrives as it
// was when it was sent, else what differed.
template<typename T, bool AsList = false>
QString sendFromReusedBuffer(const CommWorld &w)
{
    const QList<qsizetype> bytes{1, 1000, 64 * 1024 + 1, 1024 * 1024, 3 * 1024 * 1024 + 7, 500};
    const auto expected = [&bytes](int k) {
        QList<T> items(qMax<qsizetype>(1, bytes.at(k) / qsizetype(sizeof(T))));
        for (qsizetype i = 0; i < items.size(); ++i)
            items[i] = T(i * 31 + k * 7 + 1);
        return items;
    };
    QString sendProblem;
    std::unique_ptr<QThread> sender(QThread::create([&] {
        QList<T> buffer;
        for (int k = 0; k < bytes.size(); ++k) {
            buffer = expected(k);
            const auto sent = AsList ? w[0].send(1, 12, buffer).wait()
                                     : w[0].send(1, 12, std::span<const T>(buffer.constData(), size_t(buffer.size()))).wait();
            if (!sent) {
                sendProblem = problem(sent);
                return;
            }
            buffer.fill(T(0xee));
        }
    }));
    sender->start();
    QString differs;
    for (int k = 0; k < bytes.size() && differs.isEmpty(); ++k) {
        const auto got = w[1].recv<QList<T>>(0, 12).wait();
        if (!got)
            differs = problem(got);
        else if (*got != expected(k))
            differs = QStringLiteral("message %1 (%2 items) differs").arg(k).arg(expected(k).size());
    }
    if (!sender->wait(30000))
        return QStringLiteral("the sender did not finish");
    return differs.isEmpty() ? sendProblem : differs;
}

} // namespace

void TestPointToPoint::reusedSendBufferChangesNothingSent()
{
    QFETCH(QString, transport);
    QFETCH(int, socketBuffer);
    CommWorld w(transport, 2, [socketBuffer](WorldConfig &config) {
        config.chunkSize = 64 * 1024;
        if (socketBuffer > 0)
            config.transportOptions.insert(QStringLiteral("socketBuffer"), socketBuffer);
    });
    QVERIFY(w.formed());
    // Given messages from 1 item to 3 MiB, each a pattern of its own, when
    // one thread sends them all from one buffer, overwritten as soon as each
    // send completes, then every message arrives as it was when it was sent:
    // bytes, and doubles, which leave from the buffer too since items travel
    // in the sender's byte order, and a QList of doubles, which the message
    // shares (the overwrite detaches the list)
    QCOMPARE(sendFromReusedBuffer<quint8>(w), QString());
    QCOMPARE(sendFromReusedBuffer<double>(w), QString());
    QCOMPARE((sendFromReusedBuffer<double, true>(w)), QString());
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
    addTransportRows();
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
    // And so on a communicator whose ranks differ from the world's (its
    // receive stands for one the matcher holds, which is what is withdrawn)
    std::vector<Operation<Communicator>> splits;
    for (int rank = 0; rank < 2; ++rank)
        splits.push_back(w[rank].split(0, -rank));
    const auto first = splits[0].wait(), second = splits[1].wait();
    QVERIFY(first && second);
    Request onSplit = second->irecv(1, 4);
    QVERIFY(onSplit.cancel());
    QCOMPARE(onSplit.wait().error().code, ErrorCode::Cancelled);
    QVERIFY(!onSplit.cancel());
    QVERIFY(first->send(0, 4, qint64(7)).wait());
    QCOMPARE(*second->recv<qint64>(1, 4).wait(), 7);
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
    QCOMPARE(mmpi::test::finish(task), QStringLiteral("ping"));
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

// Eager, as MPI's: a small send's buffer is copied when it is posted, so the
// request finishes then, without waiting for the progress thread's turn; the
// message still arrives, and the next receive sees it.
void TestPointToPoint::smallSendFinishesAsItIsPosted()
{
    CommWorld w(QStringLiteral("tcp"), 2);
    QVERIFY(w.formed());
    Request small = w[0].isend(1, 3, qint32(7));
    QVERIFY(small.isFinished());
    QVERIFY(small.wait());
    const auto got = w[1].recv<qint32>(0, 3).wait();
    QVERIFY2(got, qPrintable(problem(got)));
    QCOMPARE(*got, 7);
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

void TestPointToPoint::largeMessagesGoStraightIntoPostedBuffers_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<QString>("items");
    QTest::newRow("bytes over tcp") << QStringLiteral("tcp") << QStringLiteral("quint8");
    QTest::newRow("int32 over local") << QStringLiteral("local") << QStringLiteral("qint32");
    QTest::newRow("double over tcp") << QStringLiteral("tcp") << QStringLiteral("double");
    QTest::newRow("int16 over local") << QStringLiteral("local") << QStringLiteral("qint16");
}

// A receive posted with its buffer (irecv(span)) before a chunked message
// begins gets the message written there as it arrives, converted to host
// order in place; small messages and later large ones still arrive right.
void TestPointToPoint::largeMessagesGoStraightIntoPostedBuffers()
{
    QFETCH(QString, transport);
    QFETCH(QString, items);
    PlacementLog log;
    CommWorld w(transport, 2, [](WorldConfig &config) { config.chunkSize = 4096; });
    QVERIFY(w.formed());
    QString problem;
    // Given posted receives, when a large and then a small message come
    if (items == QLatin1String("quint8"))
        problem = sendIntoPostedBuffer(w, numbered<quint8>(300000)) + sendIntoPostedBuffer(w, numbered<quint8>(10));
    else if (items == QLatin1String("qint32"))
        problem = sendIntoPostedBuffer(w, numbered<qint32>(100000)) + sendIntoPostedBuffer(w, numbered<qint32>(3));
    else if (items == QLatin1String("qint16"))
        problem = sendIntoPostedBuffer(w, numbered<qint16>(50001)) + sendIntoPostedBuffer(w, numbered<qint16>(1));
    else
        problem = sendIntoPostedBuffer(w, numbered<double>(70000)) + sendIntoPostedBuffer(w, numbered<double>(2));
    // Then both are whole in the buffers, and the large one went there directly
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(log.placed(), 1);
    // And a blocking receive into a buffer gets a large message right too
    const QList<qint32> sent = numbered<qint32>(50000);
    QList<qint32> buffer(sent.size());
    Request send = w[0].isend(1, 8, std::span<const qint32>(sent.constData(), size_t(sent.size())));
    const auto got = w[1].recv(std::span<qint32>(buffer.data(), size_t(buffer.size())), 0, 8).wait();
    QVERIFY2(got, qPrintable(::problem(got)));
    QVERIFY(buffer == sent);
    QVERIFY(send.wait());
}

void TestPointToPoint::wholeMessagesAreCopiedIntoPostedBuffers_data()
{
    addTransportRows();
}

// A message of one frame is copied into the buffer of the receive posted for
// it from the frame the link decoded (only a chunked message is written there
// as it arrives, chunk by chunk): the buffer holds it whole, and nothing more.
void TestPointToPoint::wholeMessagesAreCopiedIntoPostedBuffers()
{
    QFETCH(QString, transport);
    PlacementLog log;
    CommWorld w(transport, 2);
    QVERIFY(w.formed());
    for (const qsizetype bytes : {qsizetype(1), qsizetype(1024), qsizetype(8000)}) {
        const int placedBefore = log.placed();
        // Given a receive posted with a buffer, and nobody waiting on it
        const QList<quint8> sent = numbered<quint8>(bytes);
        QList<quint8> buffer(bytes + 1, quint8(0xee));
        Request receive = w[1].irecv(std::span<quint8>(buffer.data(), size_t(buffer.size())), 0, 9);
        // When a message of `bytes` bytes comes for it
        QVERIFY(w[0].send(1, 9, std::span<const quint8>(sent.constData(), size_t(sent.size()))).wait());
        QTRY_VERIFY_WITH_TIMEOUT(receive.isFinished(), 10000);
        // Then it is in the buffer, copied from its frame
        const auto status = receive.wait();
        QVERIFY2(status, qPrintable(::problem(status)));
        QCOMPARE(status->count, quint32(bytes));
        QVERIFY(buffer.first(bytes) == sent);
        QCOMPARE(buffer.last(1), QList<quint8>{0xee});
        QCOMPARE(log.placed() - placedBefore, 0);
    }
}

// A posted buffer that a message does not fit, or of another item type,
// gets nothing written to it and a clear error; the items of a message that
// went straight into one are not also in the request.
void TestPointToPoint::postedBufferErrors()
{
    PlacementLog log;
    CommWorld w(QStringLiteral("tcp"), 2, [](WorldConfig &config) { config.chunkSize = 4096; });
    QVERIFY(w.formed());
    const QList<qint32> sent = numbered<qint32>(20000);
    const auto sendIt = [&] {
        return w[0].send(1, 9, std::span<const qint32>(sent.constData(), size_t(sent.size()))).wait();
    };
    // Given a buffer one item too small, when the message comes
    QList<qint32> small(sent.size() - 1, -1);
    Request tooSmall = w[1].irecv(std::span<qint32>(small.data(), size_t(small.size())), 0, 9);
    QVERIFY(sendIt());
    // Then the receive fails as truncated, and the buffer is untouched
    QCOMPARE(tooSmall.wait().error().code, ErrorCode::TruncatedPayload);
    QVERIFY(small == QList<qint32>(small.size(), -1));
    // Given a buffer of doubles, when int32 items come
    QList<double> doubles(sent.size(), -1.0);
    Request wrongType = w[1].irecv(std::span<double>(doubles.data(), size_t(doubles.size())), 0, 9);
    QVERIFY(sendIt());
    // Then the error names both types, and the buffer is untouched
    const auto mismatch = wrongType.wait();
    QCOMPARE(mismatch.error().code, ErrorCode::TypeMismatch);
    QVERIFY2(mismatch.error().message.contains(QLatin1String("Int")), qPrintable(mismatch.error().message));
    QVERIFY(doubles == QList<double>(doubles.size(), -1.0));
    QCOMPARE(log.placed(), 0);
    // Given a message that went into a buffer, asking for it again elsewhere
    QList<qint32> buffer(sent.size());
    Request placed = w[1].irecv(std::span<qint32>(buffer.data(), size_t(buffer.size())), 0, 9);
    QVERIFY(sendIt());
    QVERIFY(placed.wait());
    QCOMPARE(log.placed(), 1);
    QList<qint32> copy(sent.size());
    QVERIFY(placed.valueInto(std::span<qint32>(copy.data(), size_t(copy.size()))));
    QVERIFY(copy == sent);
    QCOMPARE(placed.valueInto(std::span<double>(doubles.data(), size_t(doubles.size()))).error().code,
             ErrorCode::TypeMismatch);
    QCOMPARE(placed.value<QList<qint32>>().error().code, ErrorCode::TypeMismatch);
}

// Data frames whose items are in `order`, on the world communicator, as a
// peer of that byte order sends them (docs/design/protocol.md).
template<typename T>
Frame frameInOrder(const QList<T> &items, int tag, ItemOrder order)
{
    Frame frame = makeFrame(FrameKind::Data, ItemTraits<T>::type, quint32(items.size()),
                            encodeItems<T>(std::span<const T>(items), ItemTraits<T>::type, order));
    frame.header.tag = tag;
    frame.header.flags = itemOrderFlag(order);
    return frame;
}

void TestPointToPoint::itemsArriveInEitherByteOrder_data()
{
    QTest::addColumn<bool>("littleEndian");
    QTest::newRow("big-endian (the wire's own order)") << false;
    QTest::newRow("little-endian (flagged)") << true;
}

// Items come right from a peer of either byte order (a big-endian host, or
// one that sends big-endian items as MMPI did before LittleEndianItems):
// into a list, converted in place in a buffer a large message was written
// into as it arrived (its fragments each carry the flag), and as a QString.
void TestPointToPoint::itemsArriveInEitherByteOrder()
{
    QFETCH(bool, littleEndian);
    const ItemOrder order = littleEndian ? QSysInfo::LittleEndian : QSysInfo::BigEndian;
    PlacementLog log;
    CommWorld w(QStringLiteral("tcp"), 2, [](WorldConfig &config) { config.chunkSize = 4096; });
    QVERIFY(w.formed());
    const QList<double> small{1.5, -0.0, 1e300, std::numeric_limits<double>::denorm_min()};
    const QList<qint32> large = numbered<qint32>(100000);
    const QString text = QStringLiteral("Grüße, 世界");
    const QList<char16_t> units(text.utf16(), text.utf16() + text.size());
    // Given a receive posted into a buffer for the large message
    QList<qint32> buffer(large.size());
    Request intoBuffer = w[1].irecv(std::span<qint32>(buffer.data(), size_t(buffer.size())), 0, 2);
    // When rank 0 sends three messages with their items in `order`
    QVERIFY(w.world(0)->sendFrame(1, frameInOrder(small, 1, order)));
    QVERIFY(w.world(0)->sendFrame(1, frameInOrder(large, 2, order)));
    QVERIFY(w.world(0)->sendFrame(1, frameInOrder(units, 3, order)));
    // Then each arrives as it was sent, bit for bit
    const auto doubles = w[1].recv<QList<double>>(0, 1).wait();
    QVERIFY2(doubles, qPrintable(problem(doubles)));
    QCOMPARE(doubles->size(), small.size());
    QVERIFY(std::memcmp(doubles->constData(), small.constData(), size_t(small.size()) * sizeof(double)) == 0);
    const auto placed = intoBuffer.wait();
    QVERIFY2(placed, qPrintable(problem(placed)));
    QVERIFY(buffer == large);
    QCOMPARE(log.placed(), 1);
    const auto received = w[1].recv<QString>(0, 3).wait();
    QVERIFY2(received, qPrintable(problem(received)));
    QCOMPARE(*received, text);
}

// A communicator whose ranks are not the world's matches on world ranks
// underneath: a receive posted into a buffer there gets its items too.
void TestPointToPoint::postedBufferOnASplitCommunicator()
{
    CommWorld w(QStringLiteral("local"), 2, [](WorldConfig &config) { config.chunkSize = 4096; });
    QVERIFY(w.formed());
    // Given a communicator in which world rank 1 is rank 0 and world rank 0 is rank 1
    std::vector<Operation<Communicator>> splits;
    for (int r = 0; r < 2; ++r)
        splits.push_back(w[r].split(0, -r));
    const auto first = splits[0].wait();
    const auto second = splits[1].wait();
    QVERIFY(first && second);
    QCOMPARE(first->rank(), 1);
    // When world rank 0 sends a large message to rank 0 of it, posted into a buffer
    const QList<double> sent = numbered<double>(30000);
    QList<double> buffer(sent.size());
    Request receive = second->irecv(std::span<double>(buffer.data(), size_t(buffer.size())), 1, 4);
    QVERIFY(first->send(0, 4, std::span<const double>(sent.constData(), size_t(sent.size()))).wait());
    // Then the items are in the buffer and the source is a rank of the communicator
    const auto status = receive.wait();
    QVERIFY2(status, qPrintable(problem(status)));
    QCOMPARE(status->source, 1);
    QVERIFY(buffer == sent);
}

void TestPointToPoint::closingAWorldEmptiesTheBufferPool()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a large message that arrived before its receive (so in a buffer
    // of its own, which goes to the pool once copied out)
    const QList<quint8> sent = numbered<quint8>(512 * 1024);
    QVERIFY(w[0].send(1, 2, std::span<const quint8>(sent.constData(), size_t(sent.size()))).wait());
    QVERIFY(QTest::qWaitFor([&] { return w[1].iprobe(0, 2).has_value(); }, 10000));
    QList<quint8> buffer(sent.size());
    QVERIFY(w[1].recv(std::span<quint8>(buffer.data(), size_t(buffer.size())), 0, 2).wait());
    QVERIFY(buffer == sent);
    QVERIFY(BufferPool::keptBytes() >= sent.size());
    // When the worlds close, then the pool gives its buffers back
    w.world(0)->close();
    w.world(1)->close();
    QTRY_COMPARE_WITH_TIMEOUT(BufferPool::keptBytes(), 0, 10000);
}

// close() while the world is already closing (FaultTolerance closes it on
// ABORT, then the app calls closeAndWait()) lets the first close send what
// was queued before it: a message far larger than the socket buffers, then
// the goodbye. Before, the second close dropped the links at once.
void TestPointToPoint::secondCloseLetsTheFirstFinishSending()
{
    CommWorld w(QStringLiteral("tcp"), 2, [](WorldConfig &config) { config.closeTimeout = std::chrono::seconds(20); });
    QVERIFY(w.formed());
    QSignalSpy left(w.world(1), &World::nodeLeft);
    QSignalSpy lost(w.world(1), &World::nodeLost);
    const QByteArray sent = QByteArray(32 * 1024 * 1024, 'm') + QByteArray("end");
    w[0].isend(1, 4, sent);
    w.world(0)->close();
    w.world(0)->close();
    const auto got = w[1].recv<QByteArray>(0, 4).wait();
    QVERIFY2(got, qPrintable(problem(got)));
    QVERIFY(*got == sent);
    QTRY_COMPARE_WITH_TIMEOUT(left.size(), 1, 20000);
    QCOMPARE(lost.size(), 0);
}

// Messages sent just before close() to a peer that takes one every 100 ms
// (20 of 256 KiB: 2 s, with reading paused in between past
// maxUnexpectedBytes) all arrive, then the goodbye, though the close timeout
// is 0.4 s: it counts time in which nothing left. Before, close() dropped
// what was still queued after 0.4 s and the peer saw the node lost.
void TestPointToPoint::closeWaitsWhileQueuedBytesLeave()
{
    CommWorld w(QStringLiteral("tcp"), 2, [](WorldConfig &config) {
        config.closeTimeout = std::chrono::milliseconds(400);
        config.maxUnexpectedBytes = 256 * 1024;
    });
    QVERIFY(w.formed());
    QSignalSpy left(w.world(1), &World::nodeLeft);
    QSignalSpy lost(w.world(1), &World::nodeLost);
    constexpr int Messages = 20;
    for (int i = 0; i < Messages; ++i)
        w[0].isend(1, 4, QByteArray(256 * 1024, char('a' + i)));
    w.world(0)->close();
    for (int i = 0; i < Messages; ++i) {
        QTest::qWait(100);
        const auto got = w[1].recv<QByteArray>(0, 4).wait();
        QVERIFY2(got, qPrintable(QStringLiteral("message %1: %2").arg(i).arg(problem(got))));
        QCOMPARE(*got, QByteArray(256 * 1024, char('a' + i)));
    }
    QTRY_COMPARE_WITH_TIMEOUT(left.size(), 1, 20000);
    QCOMPARE(lost.size(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(w.world(0)->state(), World::State::Closed, 20000);
}

// The tcp link breaks in the middle of a message being written into a
// posted buffer (the sender has sent half its fragments): the world resumes
// on a new link and the message completes whole once the rest is sent.
void TestPointToPoint::linkBreaksWhileMessageGoesIntoBuffer()
{
    PlacementLog log;
    PartlySentMessage m(std::chrono::seconds(20));
    QVERIFY(m.world.formed());
    // Given half of the message on its way into the buffer
    QVERIFY(m.send(0, m.fragments.size() / 2));
    QTRY_COMPARE_WITH_TIMEOUT(log.placed(), 1, 20000);
    // When the link breaks, and the rest is sent
    QVERIFY(mmpi::test::WorldHarness::breakTcpLinks() >= 1);
    QVERIFY(m.send(m.fragments.size() / 2, m.fragments.size()));
    // Then the message completes on the new link, every byte as sent
    QVERIFY(QTest::qWaitFor([&] { return m.receive.isFinished(); }, 60000));
    const auto status = m.receive.wait();
    QVERIFY2(status, qPrintable(problem(status)));
    QCOMPARE(status->count, quint32(m.sent.size()));
    QVERIFY(m.buffer == m.sent);
}

// The sender vanishes in the middle of a message being written into a
// posted buffer: the receive fails with NodeLost (no hang).
void TestPointToPoint::peerLostWhileMessageGoesIntoBuffer()
{
    PlacementLog log;
    PartlySentMessage m(std::chrono::milliseconds(500));
    QVERIFY(m.world.formed());
    QVERIFY(m.send(0, m.fragments.size() - 1));
    QTRY_COMPARE_WITH_TIMEOUT(log.placed(), 1, 20000);
    QVERIFY(!m.receive.isFinished());
    m.world.kill(0);
    QVERIFY(QTest::qWaitFor([&] { return m.receive.isFinished(); }, 60000));
    const auto outcome = m.receive.wait();
    QCOMPARE(outcome.error().code, ErrorCode::NodeLost);
    QVERIFY2(outcome.error().message.contains(QLatin1String("while its message arrived")),
             qPrintable(outcome.error().message));
}

void TestPointToPoint::malformedMessageIntoBufferFailsItsReceive_data()
{
    QTest::addColumn<int>("tag");
    QTest::addColumn<int>("flags"); // added to the stray fragment's
    QTest::newRow("another tag") << 4 << 0;
    QTest::newRow("another byte order") << 3 << int(LittleEndianItems);
}

// A sender whose chunks stop belonging to the message being written into a
// posted buffer (another tag, or another byte order, mid-message: a protocol
// violation) fails that receive with the violation instead of leaving it
// waiting; a receive posted after it gets the next good message.
void TestPointToPoint::malformedMessageIntoBufferFailsItsReceive()
{
    QFETCH(int, tag);
    QFETCH(int, flags);
    PlacementLog log;
    PartlySentMessage m(std::chrono::seconds(20));
    QVERIFY(m.world.formed());
    QVERIFY(m.send(0, 3));
    QTRY_COMPARE_WITH_TIMEOUT(log.placed(), 1, 20000);
    Frame stray = m.fragments[3];
    stray.header.tag = tag;
    stray.header.flags |= quint8(flags);
    QVERIFY(m.world.world(0)->sendFrame(1, stray));
    QVERIFY(QTest::qWaitFor([&] { return m.receive.isFinished(); }, 20000));
    const auto outcome = m.receive.wait();
    QVERIFY(!outcome);
    QCOMPARE(outcome.error().code, ErrorCode::ProtocolViolation);
    QVERIFY2(outcome.error().message.contains(QLatin1String("abandoned")), qPrintable(outcome.error().message));
    // The link is made again; a later message still arrives whole
    const QList<qint32> later = numbered<qint32>(10);
    QVERIFY(m.world[0].send(1, 5, std::span<const qint32>(later.constData(), size_t(later.size()))).wait());
    const auto got = m.world[1].recv<QList<qint32>>(0, 5).wait();
    QVERIFY2(got, qPrintable(problem(got)));
    QCOMPARE(*got, later);
}

QTEST_GUILESS_MAIN(TestPointToPoint)
#include "tst_pointtopoint.moc"
