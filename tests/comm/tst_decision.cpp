// The collectives' decisions as pure functions (decision.h, bcastplan.h):
// the broadcast's (ParaStation pscom's design: the delegations of every
// topology, the Fibonacci-like split against the issue's integer recurrence,
// the model's predictions and the choice of auto), the allreduce's by its
// cost model and at its thresholds, what a forced algorithm gives, and the
// environment variables.
#include "decision.h"

#include <mmpi/comm/bcastplan.h>
#include <mmpi/wire/frame.h>

#include <QRegularExpression>
#include <QTest>

#include <cmath>
#include <vector>

using namespace mmpi;

namespace {

constexpr BcastTopology Concrete[] = {BcastTopology::Serial, BcastTopology::Pipe, BcastTopology::Binary,
                                      BcastTopology::Binomial, BcastTopology::Fibonacci};

// Follows the delegations from the root down (every node re-applying the
// topology to its own range) and counts how often each rank is reached.
QString coverageProblem(BcastTopology topology, int ranks, const BcastPlan &plan)
{
    std::vector<int> reached(size_t(ranks), 0);
    reached[0] = 1;
    struct Range
    {
        int start, length;
    };
    std::vector<Range> pending{{0, ranks}};
    while (!pending.empty()) {
        const Range r = pending.back();
        pending.pop_back();
        std::vector<char> taken(size_t(r.length), 0);
        for (const Delegation &d : bcastDelegations(topology, r.length, plan)) {
            bool overlaps = false;
            for (int i = d.offset; i >= 1 && i < d.offset + d.length && i < r.length; ++i)
                overlaps = overlaps || std::exchange(taken[size_t(i)], char(1)) != 0;
            if (d.offset < 1 || d.length < 1 || d.offset + d.length > r.length || overlaps)
                return QStringLiteral("%1 at %2: bad delegation (%3, %4) of a range of %5")
                    .arg(bcastTopologyName(topology)).arg(ranks).arg(d.offset).arg(d.length).arg(r.length);
            ++reached[size_t(r.start + d.offset)];
            pending.push_back({r.start + d.offset, d.length});
        }
    }
    for (int i = 0; i < ranks; ++i)
        if (reached[size_t(i)] != 1)
            return QStringLiteral("%1 at %2: rank %3 reached %4 times")
                .arg(bcastTopologyName(topology)).arg(ranks).arg(i).arg(reached[size_t(i)]);
    return {};
}

// The issue's recurrence, literally: a(n,m) = a(n-1,m) + a(n-m,m), a = 1 for
// 0 <= n < m; smallest n with a(n,m) >= k; keep k * a(n-m,m) / a(n,m).
int referenceKeep(int k, int m)
{
    std::vector<long long> a;
    for (int n = 0;; ++n) {
        a.push_back(n < m ? 1 : a[size_t(n - 1)] + a[size_t(n - m)]);
        if (a.back() >= k) {
            const long long kept = n >= m ? a[size_t(n - m)] : 1;
            return std::clamp(int(std::lround(double(k) * double(kept) / double(a.back()))), 1, k - 1);
        }
    }
}

LinkModel bluetooth()
{
    return {30000.0, 0.09, 0.0}; // 30 ms, 90 kB/s
}

LinkModel wifi()
{
    return {2000.0, 5.0, 0.0}; // LinkMedium::wifi(): 2 ms, 5 MB/s
}

LinkModel loopback()
{
    return {20.0, 2000.0, 4.0};
}

LinkModel namedLink(const QString &name)
{
    if (name == QLatin1String("bluetooth"))
        return bluetooth();
    return loopback();
}

} // namespace

class TestDecision : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void names();
    void everyTopologyReachesEveryRankOnce();
    void namedTopologiesHaveTheirShape();
    void fibonacciMatchesTheRecurrence();
    void fibonacciLimits();
    void predictionsFollowTheModel();
    void autoPicksTheFastestPrediction_data();
    void autoPicksTheFastestPrediction();
    void bluetoothChoices();
    void forcedTopologyIsKept();
    void bcastDecisionIsThePlan();
    void allreduceByItsCostModel();
    void allreduceWithoutTheRingKeepsItsThresholds();
    void reduceIsFlatWhileLatencyDominates();
    void allreduceRingNeedsWholeItemsAndACommutativeOp();
    void forcedAllreduceIsKept();
    void callWinsOverEnvironment();
    void variableValues();
    void environmentIsReadWithWarnings();
};

void TestDecision::names()
{
    for (BcastTopology t : {BcastTopology::Auto, BcastTopology::Serial, BcastTopology::Pipe, BcastTopology::Binary,
                            BcastTopology::Binomial, BcastTopology::Fibonacci})
        QCOMPARE(bcastTopologyFromName(bcastTopologyName(t)), std::optional<BcastTopology>(t));
    QCOMPARE(bcastTopologyFromName(u"ring"), std::nullopt);
}

void TestDecision::everyTopologyReachesEveryRankOnce()
{
    // Given every topology (Fibonacci with several g:h), When followed down from the root,
    // Then every rank is reached exactly once, at 1..16 ranks and at 100
    for (int ranks : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 100})
        for (BcastTopology t : Concrete)
            for (auto gh : {std::pair{1.0, 1.0}, {5.0, 1.0}, {1.0, 5.0}, {2.0, 1.0}, {1e6, 1.0}, {1.0, 1e6}}) {
                BcastPlan plan;
                plan.gUs = gh.first;
                plan.hUs = gh.second;
                QCOMPARE(coverageProblem(t, ranks, plan), QString());
            }
}

void TestDecision::namedTopologiesHaveTheirShape()
{
    using D = QList<Delegation>;
    QCOMPARE(bcastDelegations(BcastTopology::Serial, 4), (D{{1, 1}, {2, 1}, {3, 1}}));
    QCOMPARE(bcastDelegations(BcastTopology::Pipe, 7), (D{{1, 6}}));
    QCOMPARE(bcastDelegations(BcastTopology::Binary, 7), (D{{1, 3}, {4, 3}}));
    QCOMPARE(bcastDelegations(BcastTopology::Binary, 2), (D{{1, 1}}));
    QCOMPARE(bcastDelegations(BcastTopology::Binomial, 8), (D{{4, 4}, {2, 2}, {1, 1}}));
    QCOMPARE(bcastDelegations(BcastTopology::Binomial, 7), (D{{4, 3}, {2, 2}, {1, 1}}));
    QCOMPARE(bcastDelegations(BcastTopology::Serial, 1), D{});
}

void TestDecision::fibonacciMatchesTheRecurrence()
{
    // Given a message m forwarding delays long (g = m, h = 1), Then the split
    // is the issue's integer recurrence's, for every range size
    for (int m = 1; m <= 6; ++m)
        for (int k = 2; k <= 40; ++k) {
            const int keep = fibonacciKeep(k, double(m), 1.0);
            QVERIFY2(keep == referenceKeep(k, m),
                     qPrintable(QStringLiteral("m=%1 k=%2: %3, the recurrence says %4").arg(m).arg(k).arg(keep).arg(referenceKeep(k, m))));
        }
    // The textbook values: m = 2 is Fibonacci, 8 = 3 + 5 and 13 = 5 + 8
    QCOMPARE(fibonacciKeep(8, 2.0, 1.0), 3);
    QCOMPARE(fibonacciKeep(13, 2.0, 1.0), 5);
    // The scale of time does not matter, only g : h
    QCOMPARE(fibonacciKeep(13, 2000.0, 1000.0), 5);
}

void TestDecision::fibonacciLimits()
{
    // g = h: the binomial tree (keep half); g >> h: the pipe (keep only
    // yourself); h >> g: serial (keep all but one)
    for (int k = 2; k <= 33; ++k) {
        QCOMPARE(fibonacciKeep(k, 1.0, 1.0), (k + 1) / 2);
        QCOMPARE(fibonacciKeep(k, 1e9, 1.0), 1);
        QCOMPARE(fibonacciKeep(k, 1.0, 1e9), k - 1);
        QCOMPARE(fibonacciKeep(k, 0.0, 1.0), k - 1);
        QCOMPARE(fibonacciKeep(k, 1.0, 0.0), 1);
    }
    // (a serial node sends to the same children, from the far end)
    QList<Delegation> serial = bcastDelegations(BcastTopology::Fibonacci, 6, BcastPlan{BcastTopology::Fibonacci, 0, 1.0, 1e9});
    std::reverse(serial.begin(), serial.end());
    QCOMPARE(serial, bcastDelegations(BcastTopology::Serial, 6));
    QCOMPARE(bcastDelegations(BcastTopology::Fibonacci, 6, BcastPlan{BcastTopology::Fibonacci, 0, 1e9, 1.0}),
             bcastDelegations(BcastTopology::Pipe, 6));
}

void TestDecision::predictionsFollowTheModel()
{
    const LinkModel link{100.0, 1.0, 0.0}; // 100 us, 1 byte/us
    const double g = 1000.0 + FrameHeaderSize; // a 1000-byte frame occupies the sender this long
    // Serial: the last of 4 children gets it after 4 sends and one latency
    QCOMPARE(predictBcastUs(5, 1000, BcastTopology::Serial, 0, link), 4 * g + 100.0);
    // Store-and-forward pipe of 4 hops
    QCOMPARE(predictBcastUs(5, 1000, BcastTopology::Pipe, 0, link), 4 * (g + 100.0));
    // Binomial of 8: three rounds
    QCOMPARE(predictBcastUs(8, 1000, BcastTopology::Binomial, 0, link), 3 * (g + 100.0));
    // A segmented pipe overlaps the hops: much faster than store-and-forward
    QVERIFY(predictBcastUs(8, 100000, BcastTopology::Pipe, 10000, link)
            < 0.3 * predictBcastUs(8, 100000, BcastTopology::Pipe, 0, link));
    QCOMPARE(predictBcastUs(1, 1000, BcastTopology::Serial, 0, link), 0.0);
}

void TestDecision::autoPicksTheFastestPrediction_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("link");
    for (int n : {2, 3, 7, 8, 16})
        for (qint64 bytes : {0LL, 16LL, 1024LL, 65536LL, 1LL << 20})
            for (const char *link : {"loopback", "bluetooth"})
                QTest::addRow("%d-%lld-%s", n, bytes, link) << n << bytes << QString::fromLatin1(link);
}

void TestDecision::autoPicksTheFastestPrediction()
{
    QFETCH(int, ranks);
    QFETCH(qint64, bytes);
    QFETCH(QString, link);
    const LinkModel model = namedLink(link);
    // Given the plan auto makes, When compared with every forced topology's best plan,
    // Then none is predicted more than 1 % faster (auto prefers a named shape within 1 %)
    const BcastPlan chosen = planBcast(ranks, bytes, model);
    QVERIFY(chosen.topology != BcastTopology::Auto);
    QCOMPARE(chosen.predictedUs, predictBcastUs(ranks, bytes, chosen.topology, chosen.segmentBytes, model));
    for (BcastTopology t : Concrete) {
        const BcastPlan forced = planBcast(ranks, bytes, model, t);
        QCOMPARE(forced.topology, t);
        QVERIFY2(chosen.predictedUs <= forced.predictedUs * 1.0101,
                 qPrintable(QStringLiteral("auto chose %1 (%2 us), %3 predicts %4 us")
                                .arg(bcastTopologyName(chosen.topology)).arg(chosen.predictedUs)
                                .arg(bcastTopologyName(t)).arg(forced.predictedUs)));
    }
    if (chosen.segmentBytes > 0) {
        QVERIFY(chosen.segmentBytes >= MinBcastSegment);
        QVERIFY(bytes / chosen.segmentBytes <= MaxBcastSegments);
    }
}

void TestDecision::bluetoothChoices()
{
    // Given a Bluetooth-like radio (30 ms latency, 90 kB/s, one radio per node)
    // Then tiny messages go out serially (latency dominates, sending is cheap)
    QCOMPARE(planBcast(8, 16, bluetooth()).topology, BcastTopology::Serial);
    QCOMPARE(planBcast(16, 16, bluetooth()).topology, BcastTopology::Serial);
    // And a megabyte streams down a segmented pipe (transfer dominates)
    const BcastPlan big = planBcast(16, 1 << 20, bluetooth());
    QCOMPARE(big.topology, BcastTopology::Pipe);
    QVERIFY(big.segmentBytes > 0);
    // And in between, a tree that is neither
    const BcastPlan mid = planBcast(16, 4096, bluetooth());
    QVERIFY2(mid.topology != BcastTopology::Serial && mid.topology != BcastTopology::Pipe,
             qPrintable(bcastTopologyName(mid.topology)));
    // And on loopback a megabyte at 16 ranks is never sent whole to one child after another
    const BcastPlan loop = planBcast(16, 1 << 20, loopback());
    QVERIFY2(loop.topology != BcastTopology::Serial, qPrintable(bcastTopologyName(loop.topology)));
    // And on loopback a tree is ahead of serial at 8 ranks and more for messages of 64 KiB and more
    for (int ranks : {8, 16})
        for (qint64 bytes : {65536LL, 1LL << 20})
            QVERIFY(planBcast(ranks, bytes, loopback()).topology != BcastTopology::Serial);
}

void TestDecision::forcedTopologyIsKept()
{
    for (BcastTopology t : Concrete) {
        const BcastPlan p = planBcast(16, 1 << 20, bluetooth(), t);
        QCOMPARE(p.topology, t);
        if (t == BcastTopology::Pipe)
            QVERIFY(p.segmentBytes > 0); // a pipe of a large message forwards segments as they arrive
        if (t == BcastTopology::Serial)
            QCOMPARE(p.segmentBytes, 0);
    }
}

namespace {

using detail::AllreduceShape;
using detail::decideAllreduce;

constexpr AllreduceAlgorithm Forceable[] = {AllreduceAlgorithm::RecursiveDoubling, AllreduceAlgorithm::Ring,
                                            AllreduceAlgorithm::ReduceBcast, AllreduceAlgorithm::RecursiveHalving};

// `bytes` of 8-byte items under a commutative op: what the ring can cut.
AllreduceShape summed(int ranks, qint64 bytes)
{
    return {ranks, bytes, bytes / 8, true, true};
}

// Sets an environment variable for its lifetime.
struct ScopedVariable
{
    ScopedVariable(const char *name, const QByteArray &value) : name(name) { qputenv(name, value); }
    ~ScopedVariable() { qunsetenv(name); }
    const char *name;
};

} // namespace

void TestDecision::bcastDecisionIsThePlan()
{
    // Given a range of several ranks, the decision is planBcast()'s, forced or not
    for (BcastTopology t : {BcastTopology::Auto, BcastTopology::Pipe, BcastTopology::Fibonacci}) {
        const BcastPlan decided = detail::decideBcast(8, 1 << 20, bluetooth(), t);
        const BcastPlan planned = planBcast(8, 1 << 20, bluetooth(), t);
        QCOMPARE(decided.topology, planned.topology);
        QCOMPARE(decided.segmentBytes, planned.segmentBytes);
        QCOMPARE(decided.predictedUs, planned.predictedUs);
    }
    // And a range of one sends nothing: the forced topology, else binomial
    QCOMPARE(detail::decideBcast(1, 1 << 20, bluetooth()).topology, BcastTopology::Binomial);
    QCOMPARE(detail::decideBcast(1, 1 << 20, bluetooth(), BcastTopology::Serial).topology, BcastTopology::Serial);
    QCOMPARE(detail::decideBcast(1, 1 << 20, bluetooth()).segmentBytes, 0);
}

void TestDecision::reduceIsFlatWhileLatencyDominates()
{
    using S = detail::ReduceShape;
    // On Bluetooth (30 ms, 90 kB/s) the root's radio takes 7 small
    // contributions in 7 x 0.7 ms, where a binomial tree waits 3 latencies
    QCOMPARE(detail::decideReduce(8, 16, bluetooth()), S::Flat);
    QCOMPARE(detail::decideReduce(8, 1024, bluetooth()), S::Flat);
    // Past a contribution of half a latency's bytes (4 hops x occupancy =
    // 2 latencies: 1306 B), the tree's rounds carry less through the root
    QCOMPARE(detail::decideReduce(8, 1300, bluetooth()), S::Flat);
    QCOMPARE(detail::decideReduce(8, 1310, bluetooth()), S::Binomial);
    QCOMPARE(detail::decideReduce(8, 64 * 1024, bluetooth()), S::Binomial);
    // Many ranks: the root's n-1 contributions outweigh the latencies sooner
    QCOMPARE(detail::decideReduce(64, 16, bluetooth()), S::Flat);
    QCOMPARE(detail::decideReduce(64, 1024, bluetooth()), S::Binomial);
    // Two ranks: one message either way
    QCOMPARE(detail::decideReduce(2, 16, bluetooth()), S::Binomial);
    QCOMPARE(detail::decideReduce(1, 16, bluetooth()), S::Binomial);
    // Loopback (20 us, 2 GB/s, 4 us a frame), 4 ranks: flat while a frame
    // takes less than the latency, 3h + 20 < 2(h + 20)
    QCOMPARE(detail::decideReduce(4, 16 * 1024, loopback()), S::Flat);
    QCOMPARE(detail::decideReduce(4, 64 * 1024, loopback()), S::Binomial);
}

void TestDecision::allreduceByItsCostModel()
{
    using A = AllreduceAlgorithm;
    // Between 2 ranks (one swap) and on one rank recursive doubling, at any size and on any medium
    for (const LinkModel &medium : {bluetooth(), wifi(), loopback()}) {
        QCOMPARE(decideAllreduce(summed(2, 64LL << 20), medium), A::RecursiveDoubling);
        QCOMPARE(decideAllreduce(summed(1, 64LL << 20), medium), A::RecursiveDoubling);
    }
    // On Bluetooth at 8 ranks, 16 KiB (the emulated radio's measurement):
    // recursive halving's six latencies and 1.75 x 16 KiB beat recursive
    // doubling's three of 16 KiB each, and the ring's fourteen
    const AllreduceShape bt = summed(8, 16 * 1024);
    QCOMPARE(std::lround(detail::recursiveDoublingUs(bt, bluetooth()) / 1000), 638L);
    QCOMPARE(std::lround(detail::recursiveHalvingUs(bt, bluetooth()) / 1000), 502L);
    QCOMPARE(std::lround(detail::ringUs(bt, bluetooth()) / 1000), 745L);
    QCOMPARE(decideAllreduce(bt, bluetooth()), A::RecursiveHalving);
    // And at 4 and 16 ranks; a small contribution stays with recursive doubling's fewer latencies
    QCOMPARE(decideAllreduce(summed(4, 16 * 1024), bluetooth()), A::RecursiveHalving);
    QCOMPARE(decideAllreduce(summed(16, 16 * 1024), bluetooth()), A::RecursiveHalving);
    QCOMPARE(decideAllreduce(summed(8, 1024), bluetooth()), A::RecursiveDoubling);
    // On Wi-Fi at 8 ranks recursive halving from about 24 KB (both sides of the crossing)
    QCOMPARE(decideAllreduce(summed(8, 23 * 1024), wifi()), A::RecursiveDoubling);
    QCOMPARE(decideAllreduce(summed(8, 24 * 1024), wifi()), A::RecursiveHalving);
    QCOMPARE(decideAllreduce(summed(8, 1 << 20), wifi()), A::RecursiveHalving);
    // A group that folds sends two whole contributions more: large ones go round the ring
    QCOMPARE(decideAllreduce(summed(7, 16 * 1024), bluetooth()), A::Ring);
    QCOMPARE(decideAllreduce(summed(3, 1 << 20), wifi()), A::Ring);
    QCOMPARE(decideAllreduce(summed(6, 1 << 20), wifi()), A::Ring);
    // Beyond MaxRingRanks the ring needs segments of MinRingSegmentBytes; else the model's next best
    const int many = detail::MaxRingRanks + 1;
    const qint64 segment = detail::MinRingSegmentBytes;
    QCOMPARE(decideAllreduce(summed(many, many * segment), bluetooth()), A::Ring);
    QVERIFY(decideAllreduce(summed(many, many * segment - 8), bluetooth()) != A::Ring);
    // Wherever the ring applies, auto is the cheapest the model predicts (ties to recursive doubling)
    for (const LinkModel &medium : {bluetooth(), wifi(), loopback()})
        for (int ranks = 3; ranks <= 17; ++ranks)
            for (qint64 bytes : {qint64(ranks) * 8, qint64(1024), qint64(16 * 1024), qint64(100'000), qint64(1 << 20)}) {
                const AllreduceShape shape = summed(ranks, bytes);
                const double doubling = detail::recursiveDoublingUs(shape, medium);
                const double halving = detail::recursiveHalvingUs(shape, medium);
                const double ring = detail::ringUs(shape, medium);
                const bool ringPays = ranks <= detail::MaxRingRanks || bytes / ranks >= segment;
                A cheapest = halving < doubling ? A::RecursiveHalving : A::RecursiveDoubling;
                if (ringPays && ring < std::min(doubling, halving))
                    cheapest = A::Ring;
                QCOMPARE(decideAllreduce(shape, medium), cheapest);
            }
}

void TestDecision::allreduceWithoutTheRingKeepsItsThresholds()
{
    using A = AllreduceAlgorithm;
    // A call neither the ring nor recursive halving can run: recursive
    // doubling up to RecursiveDoublingMaxBytes, then reduce + bcast, on any medium
    const qint64 limit = detail::RecursiveDoublingMaxBytes;
    for (const LinkModel &medium : {bluetooth(), loopback()})
        for (int ranks : {3, 4, 8, 9, 16}) {
            AllreduceShape ordered = summed(ranks, limit);
            ordered.commutative = false;
            QCOMPARE(decideAllreduce(ordered, medium), A::RecursiveDoubling);
            ordered.bytes = limit + 8;
            QCOMPARE(decideAllreduce(ordered, medium), A::ReduceBcast);
        }
}

void TestDecision::allreduceRingNeedsWholeItemsAndACommutativeOp()
{
    using A = AllreduceAlgorithm;
    const qint64 large = 1 << 20;
    AllreduceShape ordered = summed(4, large);
    ordered.commutative = false; // segments would combine out of rank order
    QVERIFY(!detail::ringApplies(ordered));
    QCOMPARE(decideAllreduce(ordered, bluetooth()), A::ReduceBcast);
    AllreduceShape strings = summed(4, large);
    strings.fixedSizeItems = false; // QStrings: no segment boundary between items
    QVERIFY(!detail::ringApplies(strings));
    QCOMPARE(decideAllreduce(strings, bluetooth()), A::ReduceBcast);
    AllreduceShape few = {4, large, 3, true, true}; // 3 items of 349 KiB, fewer than the ranks
    QVERIFY(!detail::ringApplies(few));
    QCOMPARE(decideAllreduce(few, bluetooth()), A::ReduceBcast);
    QVERIFY(detail::ringApplies({4, large, 4, true, true}));
    QVERIFY(!detail::ringApplies(summed(1, large)));
}

void TestDecision::forcedAllreduceIsKept()
{
    using A = AllreduceAlgorithm;
    // Given calls on both sides of every threshold, a forced algorithm runs as forced
    for (const AllreduceShape &shape : {summed(2, 16), summed(4, 64), summed(4, 1 << 20), summed(16, 1 << 20),
                                        summed(7, 16 * 1024)})
        for (A forced : Forceable)
            QCOMPARE(decideAllreduce(shape, bluetooth(), forced), forced);
    // Except a ring or recursive halving the call does not suit: then what auto runs
    AllreduceShape ordered = summed(4, 1 << 20);
    ordered.commutative = false;
    AllreduceShape small = summed(4, 16);
    small.fixedSizeItems = false;
    const AllreduceShape few = {4, 1 << 20, 3, true, true};
    for (A forced : {A::Ring, A::RecursiveHalving}) {
        QCOMPARE(decideAllreduce(ordered, bluetooth(), forced), A::ReduceBcast);
        QCOMPARE(decideAllreduce(small, bluetooth(), forced), A::RecursiveDoubling);
        QCOMPARE(decideAllreduce(few, bluetooth(), forced), A::ReduceBcast);
        QCOMPARE(decideAllreduce(summed(1, 1 << 20), bluetooth(), forced), A::RecursiveDoubling);
    }
    // And reduce + bcast or recursive doubling run any call
    QCOMPARE(decideAllreduce(ordered, bluetooth(), A::RecursiveDoubling), A::RecursiveDoubling);
    QCOMPARE(decideAllreduce(small, bluetooth(), A::ReduceBcast), A::ReduceBcast);
}

void TestDecision::callWinsOverEnvironment()
{
    using detail::forcedAlgorithm;
    QCOMPARE(forcedAlgorithm(BcastTopology::Serial, BcastTopology::Pipe), BcastTopology::Serial);
    QCOMPARE(forcedAlgorithm(BcastTopology::Auto, BcastTopology::Pipe), BcastTopology::Pipe);
    QCOMPARE(forcedAlgorithm(BcastTopology::Auto, BcastTopology::Auto), BcastTopology::Auto);
    QCOMPARE(forcedAlgorithm(AllreduceAlgorithm::Ring, AllreduceAlgorithm::ReduceBcast), AllreduceAlgorithm::Ring);
    QCOMPARE(forcedAlgorithm(AllreduceAlgorithm::Auto, AllreduceAlgorithm::ReduceBcast), AllreduceAlgorithm::ReduceBcast);
}

void TestDecision::variableValues()
{
    using A = AllreduceAlgorithm;
    for (A a : {A::Auto, A::RecursiveDoubling, A::Ring, A::ReduceBcast, A::RecursiveHalving}) {
        QCOMPARE(allreduceAlgorithmFromName(allreduceAlgorithmName(a)), std::optional<A>(a));
        QCOMPARE(*detail::allreduceAlgorithmFromVariable(allreduceAlgorithmName(a)), a);
    }
    QCOMPARE(allreduceAlgorithmFromName(u"pipe"), std::nullopt);
    // Unset or empty is auto; case and blanks do not matter
    QCOMPARE(*detail::allreduceAlgorithmFromVariable(QString()), A::Auto);
    QCOMPARE(*detail::bcastTopologyFromVariable(QStringLiteral("  ")), BcastTopology::Auto);
    QCOMPARE(*detail::bcastTopologyFromVariable(QStringLiteral(" Pipe\n")), BcastTopology::Pipe);
    QCOMPARE(*detail::allreduceAlgorithmFromVariable(QStringLiteral("RING")), A::Ring);
    QCOMPARE(allreduceAlgorithmName(A::RecursiveHalving), QStringLiteral("recursive-halving"));
    QCOMPARE(*detail::allreduceAlgorithmFromVariable(QStringLiteral(" Recursive-Halving ")), A::RecursiveHalving);
    // An unknown value is an error that names the variable, the value and every allowed one
    const auto bad = detail::allreduceAlgorithmFromVariable(QStringLiteral("fastest"));
    QVERIFY(!bad);
    QCOMPARE(bad.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(bad.error().message.contains(QLatin1String("MMPI_ALLREDUCE_ALGORITHM=fastest"))
                 && bad.error().message.contains(QLatin1String("auto, recursive-doubling, ring, reduce-bcast, recursive-halving")),
             qPrintable(bad.error().message));
    const auto badTopology = detail::bcastTopologyFromVariable(QStringLiteral("ring"));
    QVERIFY(!badTopology);
    QVERIFY2(badTopology.error().message.contains(QLatin1String("auto, serial, pipe, binary, binomial, fibonacci")),
             qPrintable(badTopology.error().message));
}

void TestDecision::environmentIsReadWithWarnings()
{
    {
        // Given both variables set to algorithms, Then both are forced, without a warning
        const ScopedVariable bcast(detail::BcastVariable, "binary");
        const ScopedVariable allreduce(detail::AllreduceVariable, "reduce-bcast");
        const detail::ForcedAlgorithms forced = detail::forcedByEnvironment();
        QCOMPARE(forced.bcast, BcastTopology::Binary);
        QCOMPARE(forced.allreduce, AllreduceAlgorithm::ReduceBcast);
    }
    {
        // Given a value that names no algorithm, Then a warning names the allowed ones, and it is auto
        const ScopedVariable bcast(detail::BcastVariable, "pipe");
        const ScopedVariable allreduce(detail::AllreduceVariable, "rign");
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(
                                               "^MMPI_ALLREDUCE_ALGORITHM=rign names no allreduce algorithm \\(allowed: auto, ")));
        const detail::ForcedAlgorithms forced = detail::forcedByEnvironment();
        QCOMPARE(forced.bcast, BcastTopology::Pipe);
        QCOMPARE(forced.allreduce, AllreduceAlgorithm::Auto);
    }
    // Given neither, both are auto
    const detail::ForcedAlgorithms none = detail::forcedByEnvironment();
    QCOMPARE(none.bcast, BcastTopology::Auto);
    QCOMPARE(none.allreduce, AllreduceAlgorithm::Auto);
}

QTEST_GUILESS_MAIN(TestDecision)
#include "tst_decision.moc"
