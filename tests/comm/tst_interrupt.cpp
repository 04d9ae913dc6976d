// Communicator::interrupt(): on this node, the receives posted on the
// communicator (blocking in another thread, non-blocking, awaited), blocking
// probes and the collectives under way finish with the reason, while the
// communicator is not revoked: later operations work, messages that arrived
// before or come after go to later receives, sends and other communicators
// are left alone, a later collective never takes the frames of an
// interrupted one (whichever member interrupts first), and a MessageListener
// keeps listening.
#include "collectivecheck.h"
#include "communicatordata.h"
#include "coroutinetest.h"
#include "why.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>

#include <QCoroTask>
#include <QTest>

#include <atomic>
#include <thread>

using namespace mmpi;
using namespace mmpi::test;

namespace {

const Error WorldChanged{ErrorCode::Reconfigured, QStringLiteral("rank 3 was lost: BLANK")};

bool isInterrupted(const Result<Status> &got)
{
    return !got && got.error() == WorldChanged;
}

template<typename R>
QString interruptProblem(const Result<R> &got)
{
    if (got)
        return QStringLiteral("finished without the interrupt");
    return got.error() == WorldChanged ? QString() : got.error().toString();
}

// Interrupts `comm` until `done`: an operation another thread starts cannot
// be seen to wait, so the test does not guess when it does. Returns how many
// interrupts that took (the other members must take as many for collectives).
int interruptUntil(const Communicator &comm, const std::atomic<bool> &done)
{
    int interrupts = 0;
    QDeadlineTimer deadline(Patience);
    while (!done.load() && !deadline.hasExpired()) {
        comm.interrupt(WorldChanged);
        ++interrupts;
        QThread::usleep(200);
    }
    return interrupts;
}

// What is wrong with the outcome of a receive awaited by a coroutine (by
// value: a coroutine frame outlives the caller's temporaries).
QCoro::Task<QString> awaitInterrupt(Communicator comm, int source, int tag)
{
    co_return interruptProblem(co_await comm.recv<qint32>(source, tag));
}

} // namespace

class TestInterrupt : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void wakesABlockingReceiveInAnotherThread();
    void wakesPostedAndAwaitedReceives();
    void wakesABlockingProbe();
    void keepsMessagesNoReceiveHasTaken();
    void leavesSendsAndOtherCommunicatorsAlone();
    void wakesACollectiveARankNeverJoins();
    void laterCollectiveMeetsWhoeverInterruptsFirst();
    void multiPhaseCollectivesAfterInterrupts();
    void messageListenerKeepsListening();
    void sequenceNumbersStayInTheirEpoch();
};

void TestInterrupt::wakesABlockingReceiveInAnotherThread()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a thread blocked in a receive from anyone, with any tag
    std::atomic<bool> done = false;
    Result<qint32> got = qint32(0);
    std::thread receiver([&] {
        got = w[0].recv<qint32>().wait();
        done = true;
    });
    // When this node interrupts the communicator
    interruptUntil(w[0], done);
    receiver.join();
    // Then the receive ends with the reason as given, and the communicator is not revoked
    QVERIFY2(interruptProblem(got).isEmpty(), qPrintable(interruptProblem(got)));
    QVERIFY(!w[0].revoked());
    // And a message sent afterwards reaches a later blocking receive
    std::thread again([&] { got = w[0].recv<qint32>(1, 3).wait(); });
    QVERIFY(w[1].send(0, 3, qint32(42)).wait());
    again.join();
    QVERIFY2(got && *got == 42, qPrintable(why(got)));
}

void TestInterrupt::wakesPostedAndAwaitedReceives()
{
    CommWorld w(QStringLiteral("local"), 3);
    QVERIFY(w.formed());
    // Given receives posted from anyone, from a rank with a tag, from a rank
    // with any tag, one into a buffer, and one a coroutine awaits
    const QList<Request> posted{w[0].irecv(), w[0].irecv(1, 5), w[0].irecv(2, AnyTag)};
    QList<qint32> buffer(4);
    const Request intoBuffer = w[0].irecv(std::span<qint32>(buffer), AnySource, 6);
    QCoro::Task<QString> awaited = awaitInterrupt(w[0], 1, 7);
    // When rank 0 interrupts the communicator
    w[0].interrupt(WorldChanged);
    // Then every one of them finishes at once with the reason
    for (const Request &r : posted + QList<Request>{intoBuffer}) {
        QVERIFY(r.isFinished());
        QVERIFY2(isInterrupted(r.wait()), qPrintable(why(r.wait())));
    }
    const QString resumed = finish(awaited);
    QVERIFY2(resumed.isEmpty(), qPrintable(resumed));
    // And receives posted afterwards take the messages sent afterwards
    const Request later = w[0].irecv(1, 5);
    const auto anyone = w[0].recv<qint32>();
    QVERIFY(w[1].send(0, 5, qint32(55)).wait());
    QVERIFY(w[2].send(0, 8, qint32(88)).wait());
    QCOMPARE(*within(received(later)), (Status{1, 5, ItemType::Int, 1, 4}));
    QCOMPARE(*later.value<qint32>(), 55);
    QCOMPARE(*within(anyone), 88);
}

void TestInterrupt::wakesABlockingProbe()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a thread blocked probing for a message that does not come
    std::atomic<bool> done = false;
    Result<Status> probed = Status{};
    std::thread prober([&] {
        probed = w[0].probe(1, 4);
        done = true;
    });
    // When the communicator is interrupted, then the probe returns the reason
    interruptUntil(w[0], done);
    prober.join();
    QVERIFY2(isInterrupted(probed), qPrintable(why(probed)));
    // And a later probe sees the message that comes afterwards
    QVERIFY(w[1].send(0, 4, qint32(4)).wait());
    const auto later = w[0].probe(1, 4);
    QVERIFY2(later && later->tag == 4, qPrintable(why(later)));
}

void TestInterrupt::keepsMessagesNoReceiveHasTaken()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a message that arrived with no receive for it, and a receive
    // posted for another tag
    const Request other = w[0].irecv(1, 8);
    QVERIFY(w[1].send(0, 9, qint32(7)).wait());
    QVERIFY(QTest::qWaitFor([&] { return w[0].iprobe(1, 9).has_value(); }, Patience));
    // When the communicator is interrupted
    w[0].interrupt(WorldChanged);
    QVERIFY(isInterrupted(other.wait()));
    // Then the message is still there, and a later receive takes it
    QCOMPARE(w[0].unexpectedMessages(), 1);
    QCOMPARE(*within(w[0].recv<qint32>(1, 9)), 7);
    QCOMPARE(w[0].unexpectedMessages(), 0);
}

void TestInterrupt::leavesSendsAndOtherCommunicatorsAlone()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given a duplicate of the world communicator (whose ranks it
    // translates), and a receive posted on each
    auto dup0 = w[0].dup(), dup1 = w[1].dup();
    const auto copy0 = within(dup0), copy1 = within(dup1);
    QVERIFY2(copy0 && copy1, qPrintable(why(copy0) + why(copy1)));
    const auto onCopy = copy0->recv<qint32>(1, 2);
    const auto onWorld = w[0].recv<qint32>(1, 2);
    // When rank 0 sends a large message on the duplicate and interrupts it at once
    const auto sent = copy0->send(1, 1, QList<qint32>(100'000, 3));
    copy0->interrupt(WorldChanged);
    // Then the duplicate's receive ends with the reason, the send is delivered
    const auto cut = within(onCopy);
    QVERIFY2(interruptProblem(cut).isEmpty(), qPrintable(interruptProblem(cut)));
    QVERIFY(within(sent));
    QCOMPARE(within(copy1->recv<QList<qint32>>(0, 1))->size(), 100'000);
    // And the world communicator's receive still waits for its message
    QVERIFY(!onWorld.request().isFinished());
    QVERIFY(w[1].send(0, 2, qint32(2)).wait());
    QCOMPARE(*within(onWorld), 2);
}

// The collective sequence: rank 1 never starts the allreduce rank 0 has sent
// its part of, so without an interrupt epoch rank 1's next allreduce would
// take that stale part and rank 0's next one would wait for ever.
void TestInterrupt::wakesACollectiveARankNeverJoins()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // Given rank 0 in an allreduce rank 1 never joins, whose part has reached rank 1
    const auto cut = w[0].allreduce(qint32(1000), Op::Sum);
    QVERIFY(QTest::qWaitFor([&] { return w[1].unexpectedBytes() > 0; }, Patience));
    QVERIFY(!cut.request().isFinished());
    // When rank 0 interrupts the communicator
    w[0].interrupt(WorldChanged);
    // Then its allreduce ends at once with the reason
    const auto got = within(cut);
    QVERIFY2(interruptProblem(got).isEmpty(), qPrintable(interruptProblem(got)));
    // And once rank 1 has interrupted too, it holds nothing of that allreduce,
    // and a later allreduce and barrier of both give the right results
    w[1].interrupt(WorldChanged);
    QCOMPARE(w[1].unexpectedBytes(), 0);
    const QString problem = onAll<qint32>(
        w, [](const Communicator &c, int r) { return c.allreduce(qint32(r + 1), Op::Sum); },
        [](int, const qint32 &sum) { return sum == 3 ? QString() : QStringLiteral("sum %1").arg(sum); });
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    std::vector<Operation<void>> barriers{w[0].barrier(), w[1].barrier()};
    for (const auto &b : barriers) {
        const auto passed = within(b);
        QVERIFY2(passed, qPrintable(why(passed)));
    }
}

// Members reach the interrupt at different times: the first ones may start
// the next collectives before the last has interrupted.
void TestInterrupt::laterCollectiveMeetsWhoeverInterruptsFirst()
{
    CommWorld w(QStringLiteral("local"), 3);
    QVERIFY(w.formed());
    // Given ranks 0 and 1 in a barrier and an allreduce rank 2 never joins
    std::vector<Operation<void>> barriers{w[0].barrier(), w[1].barrier()};
    std::vector<Operation<qint32>> sums{w[0].allreduce(qint32(100), Op::Sum), w[1].allreduce(qint32(100), Op::Sum)};
    // When rank 0 interrupts, then its collectives end with the reason, and
    // rank 1's, told by rank 0, with its code
    w[0].interrupt(WorldChanged);
    QVERIFY2(interruptProblem(within(barriers[0])).isEmpty(), qPrintable(interruptProblem(within(barriers[0]))));
    QVERIFY2(interruptProblem(within(sums[0])).isEmpty(), qPrintable(interruptProblem(within(sums[0]))));
    for (const Error &e : {within(barriers[1]).error(), within(sums[1]).error()})
        QVERIFY2(e.code == ErrorCode::Reconfigured, qPrintable(e.toString()));
    // And once ranks 1 and 2 have interrupted too, rank 2 holds nothing of them
    w[1].interrupt(WorldChanged);
    w[2].interrupt(WorldChanged);
    QCOMPARE(w[2].unexpectedBytes(), 0);
    // When ranks 0 and 1 interrupt again and start the next collectives
    // while rank 2 has not, its frames reach rank 2 and wait there
    w[0].interrupt(WorldChanged);
    w[1].interrupt(WorldChanged);
    std::vector<Operation<qint32>> next{w[0].allreduce(qint32(1), Op::Sum), w[1].allreduce(qint32(2), Op::Sum)};
    std::vector<Operation<void>> nextBarriers{w[0].barrier(), w[1].barrier()};
    QVERIFY(QTest::qWaitFor([&] { return w[2].unexpectedBytes() > 0; }, Patience));
    // Then rank 2's interrupt keeps them, and its collectives meet the others'
    w[2].interrupt(WorldChanged);
    QVERIFY(w[2].unexpectedBytes() > 0);
    next.push_back(w[2].allreduce(qint32(4), Op::Sum));
    nextBarriers.push_back(w[2].barrier());
    for (int r = 0; r < 3; ++r) {
        const auto sum = within(next[size_t(r)]);
        QVERIFY2(sum && *sum == 7, qPrintable(QStringLiteral("rank %1: %2").arg(r).arg(sum ? QString::number(*sum) : why(sum))));
        const auto barrier = within(nextBarriers[size_t(r)]);
        QVERIFY2(barrier, qPrintable(why(barrier)));
    }
}

// Starts `start` on every rank but the last, and there once their frames
// have reached it (they wait for a collective it has not started).
template<typename R>
QString lastStartsLate(const CommWorld &w, const Start<R> &start, const Check<R> &check)
{
    const int last = w.size() - 1;
    std::vector<Operation<R>> ops;
    for (int r = 0; r < last; ++r)
        ops.push_back(start(w[r], r));
    if (!QTest::qWaitFor([&] { return w[last].unexpectedBytes() > 0; }, Patience))
        return QStringLiteral("no frame reached rank %1").arg(last);
    ops.push_back(start(w[last], last));
    for (int r = 0; r <= last; ++r) {
        const auto got = within(ops[size_t(r)]);
        if (QString p = got ? check(r, *got) : got.error().toString(); !p.isEmpty())
            return QStringLiteral("rank %1: %2").arg(r).arg(p);
    }
    return {};
}

// dup() and allreduce reserve two sequence numbers at once; every rank
// interrupted alike runs them in each epoch, and again once the epochs have
// wrapped, when the numbers are those of collectives finished long ago.
void TestInterrupt::multiPhaseCollectivesAfterInterrupts()
{
    CommWorld w(QStringLiteral("local"), 3);
    QVERIFY(w.formed());
    const QList<qint32> items(20'000, 1); // 80 kB: past recursive doubling
    for (int round = 0; round < 20; ++round) {
        for (int r = 0; r < 3; ++r)
            w[r].interrupt(WorldChanged);
        const QString dups = lastStartsLate<Communicator>(
            w, [](const Communicator &c, int) { return c.dup(); },
            [](int r, const Communicator &copy) { return copy.rank() == r ? QString() : QStringLiteral("wrong rank"); });
        QVERIFY2(dups.isEmpty(), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(dups)));
        const QString sums = lastStartsLate<QList<qint32>>(
            w, [&](const Communicator &c, int) { return c.allreduce(items, Op::Sum); },
            [](int, const QList<qint32> &sum) { return sum == QList<qint32>(20'000, 3) ? QString() : QStringLiteral("wrong sum"); });
        QVERIFY2(sums.isEmpty(), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(sums)));
    }
}

void TestInterrupt::messageListenerKeepsListening()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    QObject owner;
    QList<qint32> got;
    MessageListener listener(w[0], &owner, QStringLiteral("test"),
                             [&](const Status &, const Request &r) { got << r.value<qint32>().value(); });
    QVERIFY(w[1].send(0, 1, qint32(1)).wait());
    QTRY_COMPARE_WITH_TIMEOUT(got, QList<qint32>{1}, Patience);
    // When its receive is interrupted, and again before it has posted another
    w[0].interrupt(WorldChanged);
    w[0].interrupt(WorldChanged);
    QCOMPARE(listener.deliverPending(), 0);
    // Then it hears what comes next, in order
    QVERIFY(w[1].send(0, 2, qint32(2)).wait());
    w[0].interrupt(WorldChanged);
    QVERIFY(w[1].send(0, 3, qint32(3)).wait());
    QTRY_COMPARE_WITH_TIMEOUT(got, (QList<qint32>{1, 2, 3}), Patience);
    // And a revoke still stops it: the next message waits unreceived
    w[0].revoke({ErrorCode::Revoked, QStringLiteral("over")}, RevokeScope::ThisNode);
    QVERIFY(w[1].send(0, 4, qint32(4)).wait());
    QVERIFY(QTest::qWaitFor([&] { return w[0].unexpectedMessages() == 1; }, Patience));
    QCOMPARE(got, (QList<qint32>{1, 2, 3}));
}

// The counter behind collectives' sequence numbers (collectivetag.h), without a world.
void TestInterrupt::sequenceNumbersStayInTheirEpoch()
{
    using namespace mmpi::detail;
    CommunicatorData d;
    QCOMPARE(d.takeSequence(), 0u);
    QCOMPARE(d.takeSequence(2), 1u);
    // An interrupt begins the next epoch at its first number
    QCOMPARE(d.beginNextEpoch(), 1u);
    QCOMPARE(d.takeSequence(), firstOfEpoch(1));
    // A run that would leave the epoch starts over at its first number
    d.sequence->store(firstOfEpoch(1) | CountMask);
    QCOMPARE(d.takeSequence(2), firstOfEpoch(1));
    QCOMPARE(d.takeSequence(), firstOfEpoch(1) + 2);
    d.sequence->store(firstOfEpoch(1) | CountMask);
    QCOMPARE(d.takeSequence(), firstOfEpoch(1) | CountMask);
    QCOMPARE(d.takeSequence(), firstOfEpoch(1));
    // Epochs wrap: the half behind the current one is over, the rest is ahead
    d.sequence->store(firstOfEpoch(Epochs - 1) + 5);
    QCOMPARE(d.beginNextEpoch(), 0u);
    QCOMPARE(d.takeSequence(), 0u);
    QVERIFY(isEarlierEpoch(Epochs - 1, 0) && isEarlierEpoch(Epochs / 2, 0));
    QVERIFY(!isEarlierEpoch(0, 0) && !isEarlierEpoch(1, 0) && !isEarlierEpoch(Epochs / 2 - 1, 0));
    QVERIFY(isEarlierEpoch(3, 4) && !isEarlierEpoch(4, 3));
}

QTEST_GUILESS_MAIN(TestInterrupt)
#include "tst_interrupt.moc"
