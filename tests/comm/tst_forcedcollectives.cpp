// Forced collective algorithms on real worlds: an algorithm asked in the
// call (AllreduceOptions, BcastOptions) or by the environment
// (MMPI_ALLREDUCE_ALGORITHM, MMPI_BCAST_ALGORITHM, read as the comm layer
// attaches to a world) runs, as the tuning.h diagnostics tell, and gives
// the right result; the call wins over the environment; a bad value warns.
#include "commworld.h"
#include "patience.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/tuning.h>

#include <QDeadlineTimer>
#include <QRegularExpression>
#include <QTest>
#include <QThread>

#include <functional>
#include <memory>
#include <vector>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

Q_DECLARE_METATYPE(mmpi::AllreduceAlgorithm)

namespace {

// Sets an environment variable for its lifetime.
struct ScopedVariable
{
    ScopedVariable(const char *name, const QByteArray &value) : name(name) { qputenv(name, value); }
    ~ScopedVariable() { qunsetenv(name); }
    const char *name;
};

// A world of `size` ranks over the local transport whose comm layer is made
// while `variable` is `value` (the variable is unset again after).
std::unique_ptr<CommWorld> worldWith(int size, const char *variable = nullptr, const QByteArray &value = {})
{
    std::optional<ScopedVariable> set;
    if (variable)
        set.emplace(variable, value);
    return std::make_unique<CommWorld>(QStringLiteral("local"), size);
}

template<typename R>
Result<R> within(const Operation<R> &op)
{
    QDeadlineTimer deadline(Patience);
    while (!op.request().isFinished() && !deadline.hasExpired())
        QThread::usleep(200);
    if (!op.request().isFinished())
        return Error{ErrorCode::Cancelled, QStringLiteral("no result within %1 ms").arg(Patience)};
    return op.wait();
}

// Rank r contributes i * (r + 1) at item i.
QList<qint64> contributionOf(int rank, qsizetype items)
{
    QList<qint64> list(items);
    for (qsizetype i = 0; i < items; ++i)
        list[i] = i * (rank + 1);
    return list;
}

// An allreduce(Sum) of `items` on every rank with `options`: the first
// problem with a result, or with the algorithm a rank says it ran.
QString allreduceRuns(const CommWorld &w, qsizetype items, AllreduceOptions options, AllreduceAlgorithm expected)
{
    std::vector<Operation<QList<qint64>>> ops;
    for (int r = 0; r < w.size(); ++r)
        ops.push_back(w[r].allreduce(contributionOf(r, items), Op::Sum, options));
    const qint64 ranksSum = qint64(w.size()) * (w.size() + 1) / 2;
    for (int r = 0; r < w.size(); ++r) {
        const auto got = within(ops[size_t(r)]);
        if (!got)
            return QStringLiteral("rank %1: %2").arg(r).arg(got.error().toString());
        if (got->size() != items || got->constLast() != (items - 1) * ranksSum)
            return QStringLiteral("rank %1: a wrong sum").arg(r);
        const auto ran = lastAllreduceAlgorithm(w[r]);
        if (ran != expected)
            return QStringLiteral("rank %1 ran %2, not %3").arg(r)
                .arg(ran ? allreduceAlgorithmName(*ran) : QStringLiteral("none"), allreduceAlgorithmName(expected));
    }
    return {};
}

// A bcast of 1 KiB from rank 0 with `options`: the first problem with a
// result, or the topology the root's plan has.
QString bcastRuns(const CommWorld &w, BcastOptions options, BcastTopology expected)
{
    const QByteArray message(1024, 'm');
    std::vector<Operation<QByteArray>> ops;
    for (int r = 0; r < w.size(); ++r)
        ops.push_back(w[r].bcast(r == 0 ? message : QByteArray(), 0, options));
    for (int r = 0; r < w.size(); ++r) {
        const auto got = within(ops[size_t(r)]);
        if (!got)
            return QStringLiteral("rank %1: %2").arg(r).arg(got.error().toString());
        if (*got != message)
            return QStringLiteral("rank %1: wrong bytes").arg(r);
    }
    const auto plan = lastBcastPlan(w[0]);
    if (!plan || plan->topology != expected)
        return QStringLiteral("the root used %1, not %2")
            .arg(plan ? bcastTopologyName(plan->topology) : QStringLiteral("nothing"), bcastTopologyName(expected));
    return {};
}

} // namespace

class TestForcedCollectives : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void allreduceOptionRunsThatAlgorithm_data();
    void allreduceOptionRunsThatAlgorithm();
    void ringThatCannotRunGivesWayWithAWarning();
    void differentAlgorithmsFailEveryRank();
    void environmentForcesAllreduce();
    void environmentForcesBcast();
    void unknownValueWarnsAndLeavesAuto();
    void cleanupTestCase() { m_four.reset(); }

private:
    std::unique_ptr<CommWorld> m_four;
};

void TestForcedCollectives::allreduceOptionRunsThatAlgorithm_data()
{
    using A = AllreduceAlgorithm;
    QTest::addColumn<qsizetype>("items");
    QTest::addColumn<A>("forced");
    QTest::addColumn<A>("expected");
    // 16 items (128 B): auto runs recursive doubling; 40000 (320 kB) on
    // loopback's model: recursive halving (616 us against 684 for the ring)
    for (qsizetype items : {qsizetype(16), qsizetype(40000)})
        for (A forced : {A::Auto, A::RecursiveDoubling, A::Ring, A::ReduceBcast, A::RecursiveHalving})
            QTest::addRow("%lld-%s", qlonglong(items), qPrintable(allreduceAlgorithmName(forced)))
                << items << forced
                << (forced != A::Auto ? forced : items == 16 ? A::RecursiveDoubling : A::RecursiveHalving);
}

void TestForcedCollectives::allreduceOptionRunsThatAlgorithm()
{
    QFETCH(qsizetype, items);
    QFETCH(AllreduceAlgorithm, forced);
    QFETCH(AllreduceAlgorithm, expected);
    if (!m_four)
        m_four = worldWith(4);
    QVERIFY(m_four->formed());
    // Given 4 ranks that all pass the same option, Then each ran it, and every sum is right
    QCOMPARE(allreduceRuns(*m_four, items, AllreduceOptions{forced}, expected), QString());
}

void TestForcedCollectives::ringThatCannotRunGivesWayWithAWarning()
{
    const auto w = worldWith(3);
    QVERIFY(w->formed());
    // Given a forced ring for a non-commutative op (keep the left side) on 320 kB
    const ReduceOp<qint64> first([](qint64 a, qint64) { return a; }, Commutativity::NonCommutative);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^allreduce: ring was forced but cannot run "
                                                                         "this call .* reduce-bcast runs instead$")));
    std::vector<Operation<QList<qint64>>> ops;
    for (int r = 0; r < w->size(); ++r)
        ops.push_back((*w)[r].allreduce(contributionOf(r, 40000), first, AllreduceOptions{AllreduceAlgorithm::Ring}));
    // Then what auto runs ran instead, in rank order: rank 0's items everywhere
    for (int r = 0; r < w->size(); ++r) {
        const auto got = within(ops[size_t(r)]);
        QVERIFY2(got, qPrintable(got ? QString() : got.error().toString()));
        QCOMPARE(*got, contributionOf(0, 40000));
        QCOMPARE(lastAllreduceAlgorithm((*w)[r]), std::optional(AllreduceAlgorithm::ReduceBcast));
    }
}

void TestForcedCollectives::differentAlgorithmsFailEveryRank()
{
    using A = AllreduceAlgorithm;
    const auto w = worldWith(3);
    QVERIFY(w->formed());
    struct Mismatch
    {
        A mine, theirs;
        int rank; // the one that forces `mine`
    };
    // Given one rank forcing another algorithm than the others, Then every
    // rank fails in time, for each pair of algorithms. (Recursive halving and
    // doubling fold 3 ranks alike, rank 0 handing its contribution to rank 1
    // and getting the result back, so they are told apart at rank 2. Not
    // checked: reduce + bcast at rank 0 against either, whose rank 1 waits
    // for rank 0's contribution while rank 0's reduce waits for rank 1's.)
    for (const Mismatch &m : {Mismatch{A::Ring, A::RecursiveDoubling, 0}, {A::ReduceBcast, A::Ring, 0},
                              {A::RecursiveDoubling, A::ReduceBcast, 0}, {A::RecursiveHalving, A::Ring, 0},
                              {A::Ring, A::RecursiveHalving, 0}, {A::RecursiveHalving, A::ReduceBcast, 0},
                              {A::RecursiveHalving, A::RecursiveDoubling, 2},
                              {A::RecursiveDoubling, A::RecursiveHalving, 2}}) {
        std::vector<Operation<QList<qint64>>> ops;
        for (int r = 0; r < w->size(); ++r)
            ops.push_back((*w)[r].allreduce(contributionOf(r, 40000), Op::Sum,
                                            AllreduceOptions{r == m.rank ? m.mine : m.theirs}));
        for (int r = 0; r < w->size(); ++r) {
            const auto got = within(ops[size_t(r)]);
            QVERIFY2(!got && got.error().code != ErrorCode::Cancelled,
                     qPrintable(QStringLiteral("%1 at rank %2 against %3, rank %4: %5")
                                    .arg(allreduceAlgorithmName(m.mine)).arg(m.rank)
                                    .arg(allreduceAlgorithmName(m.theirs)).arg(r)
                                    .arg(got ? QStringLiteral("succeeded") : got.error().toString())));
        }
    }
    // And the communicator works again afterwards
    QCOMPARE(allreduceRuns(*w, 16, {}, A::RecursiveDoubling), QString());
}

void TestForcedCollectives::environmentForcesAllreduce()
{
    using A = AllreduceAlgorithm;
    // Given MMPI_ALLREDUCE_ALGORITHM=reduce-bcast as the world's comm layer is made
    const auto w = worldWith(3, "MMPI_ALLREDUCE_ALGORITHM", "reduce-bcast");
    QVERIFY(w->formed());
    // Then a small allreduce, recursive doubling for auto, runs reduce + bcast
    QCOMPARE(allreduceRuns(*w, 16, {}, A::ReduceBcast), QString());
    // And the call's option wins over it
    QCOMPARE(allreduceRuns(*w, 16, AllreduceOptions{A::Ring}, A::Ring), QString());
    QCOMPARE(allreduceRuns(*w, 16, AllreduceOptions{A::RecursiveHalving}, A::RecursiveHalving), QString());
    // And MMPI_ALLREDUCE_ALGORITHM=recursive-halving forces it on another world, 3 ranks of which fold
    const auto halving = worldWith(3, "MMPI_ALLREDUCE_ALGORITHM", "recursive-halving");
    QVERIFY(halving->formed());
    QCOMPARE(allreduceRuns(*halving, 16, {}, A::RecursiveHalving), QString());
    QCOMPARE(allreduceRuns(*halving, 40000, {}, A::RecursiveHalving), QString());
    // And a world made after it is unset decides itself
    const auto later = worldWith(3);
    QVERIFY(later->formed());
    QCOMPARE(allreduceRuns(*later, 16, {}, A::RecursiveDoubling), QString());
}

void TestForcedCollectives::environmentForcesBcast()
{
    // Given MMPI_BCAST_ALGORITHM=pipe as the world's comm layer is made
    const auto w = worldWith(4, "MMPI_BCAST_ALGORITHM", "pipe");
    QVERIFY(w->formed());
    // Then a bcast without options goes down a pipe, and arrives whole
    QCOMPARE(bcastRuns(*w, {}, BcastTopology::Pipe), QString());
    // And the call's topology wins over it
    QCOMPARE(bcastRuns(*w, BcastOptions{BcastTopology::Serial}, BcastTopology::Serial), QString());
    // And the pipe is not what auto picks for 1 KiB on 4 ranks of loopback
    const auto plain = worldWith(4);
    QVERIFY(plain->formed());
    QVERIFY(bcastRuns(*plain, {}, BcastTopology::Pipe).contains(QLatin1String("not pipe")));
}

void TestForcedCollectives::unknownValueWarnsAndLeavesAuto()
{
    // Given a value that names no algorithm, Then each node's comm layer warns
    // once, naming the allowed values, as it is made
    const QRegularExpression warning(QStringLiteral("^MMPI_ALLREDUCE_ALGORITHM=fastest names no allreduce algorithm "
                                                    "\\(allowed: auto, recursive-doubling, ring, reduce-bcast, recursive-halving\\)"));
    for (int r = 0; r < 2; ++r)
        QTest::ignoreMessage(QtWarningMsg, warning);
    const auto w = worldWith(2, "MMPI_ALLREDUCE_ALGORITHM", "fastest");
    QVERIFY(w->formed());
    // And the collective decides itself
    QCOMPARE(allreduceRuns(*w, 16, {}, AllreduceAlgorithm::RecursiveDoubling), QString());
}

QTEST_MAIN(TestForcedCollectives)
#include "tst_forcedcollectives.moc"
