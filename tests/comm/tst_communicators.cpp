// Communicators made from the world's through the public API, between
// Worlds formed in this process: split (colors, keys, Undefined, a split of
// a split), dup with its own matching, and intercommunicators (creation,
// point-to-point across, merge both ways).
#include "collectivecheck.h"
#include "collectivetest.h"
#include "why.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/intercommunicator.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestCommunicators : public CollectiveTest
{
    Q_OBJECT
public:
    TestCommunicators() : CollectiveTest({7}) {}

private Q_SLOTS:
    void splitAndDup();
    void intercommunicator();
};

void TestCommunicators::splitAndDup()
{
    const CommWorld &w = worlds().sized(7);
    // Given the 7 ranks split by rank % 3, keyed by minus the rank
    std::vector<Operation<Communicator>> splits;
    for (int r = 0; r < 7; ++r)
        splits.push_back(w[r].split(r % 3, -r));
    std::vector<Communicator> sub;
    for (int r = 0; r < 7; ++r) {
        const auto c = within(splits[size_t(r)]);
        QVERIFY2(c, qPrintable(why(c)));
        sub.push_back(*c);
    }
    // Then each rank sees its color's ranks, in key order, with one id per split
    for (int r = 0; r < 7; ++r) {
        QList<int> expected;
        for (int i = 6; i >= 0; --i)
            if (i % 3 == r % 3)
                expected.append(i);
        QCOMPARE(sub[size_t(r)].group(), expected);
        QCOMPARE(sub[size_t(r)].rank(), int(expected.indexOf(r)));
        QCOMPARE(sub[size_t(r)].worldRank(sub[size_t(r)].rank()), r);
        QCOMPARE(sub[size_t(r)].id(), sub[0].id());
        QVERIFY(sub[size_t(r)].id() != 0);
    }
    // And the three communicators run collectives at the same time
    std::vector<Operation<qint32>> sums;
    for (int r = 0; r < 7; ++r)
        sums.push_back(sub[size_t(r)].allreduce(qint32(r), Op::Sum));
    for (int r = 0; r < 7; ++r) {
        qint32 expected = 0;
        for (int i = r % 3; i < 7; i += 3)
            expected += i;
        QCOMPARE(*within(sums[size_t(r)]), expected);
    }
    // And point-to-point inside one reports sources as its ranks
    // (color 0 is world ranks 6, 3, 0 in that order)
    QVERIFY(within(sub[6].send(1, 5, QStringLiteral("from sub rank 0"))));
    Request got = sub[3].irecv(AnySource, 5);
    const auto status = within(received(got));
    QVERIFY2(status, qPrintable(why(status)));
    QCOMPARE(status->source, 0);
    QCOMPARE(*got.value<QString>(), QStringLiteral("from sub rank 0"));
    QCOMPARE(sub[0].iprobe(), std::nullopt);
    // A dup has its own matching: a message on it is not seen on the original
    std::vector<Operation<Communicator>> dups;
    for (int r = 0; r < 7; ++r)
        dups.push_back(w[r].dup());
    std::vector<Communicator> copy;
    for (int r = 0; r < 7; ++r)
        copy.push_back(*within(dups[size_t(r)]));
    QVERIFY(copy[0].id() != 0 && copy[0].id() != sub[0].id());
    QCOMPARE(copy[3].group(), w[3].group());
    QVERIFY(within(copy[2].send(4, 1, qint32(99))));
    QVERIFY(QTest::qWaitFor([&] { return copy[4].iprobe(2, 1).has_value(); }, Patience));
    QCOMPARE(w[4].iprobe(2, 1), std::nullopt);
    QCOMPARE(*within(copy[4].recv<qint32>(2, 1)), 99);
    // Undefined leaves a rank out; a negative color is an error on every rank
    std::vector<Operation<Communicator>> partial;
    for (int r = 0; r < 7; ++r)
        partial.push_back(w[r].split(r < 2 ? 0 : Undefined));
    for (int r = 0; r < 7; ++r) {
        const auto c = within(partial[size_t(r)]);
        QVERIFY(c);
        QCOMPARE(c->isNull(), r >= 2);
        if (r < 2)
            QCOMPARE(c->size(), 2);
    }
    QCOMPARE((allFail<Communicator>(w, [](const Communicator &c, int r) { return c.split(r == 4 ? -5 : 0); }, ErrorCode::BadConfiguration)),
             QString());
    // Split of a split
    std::vector<Operation<Communicator>> again;
    for (int r : {0, 3, 6})
        again.push_back(sub[size_t(r)].split(0, r == 3 ? -1 : 1));
    const auto c3 = within(again[1]);
    QVERIFY(c3);
    QCOMPARE(c3->rank(), 0);
    QCOMPARE(c3->group(), (QList<int>{3, 6, 0})); // key -1 first, then by rank in the parent (6 is 0, 0 is 2)
    (void)within(again[0]);
    (void)within(again[2]);
}

void TestCommunicators::intercommunicator()
{
    const CommWorld &w = worlds().sized(7);
    // Given two groups, ranks 0-2 and 3-6, and an intercommunicator between them
    std::vector<Operation<Communicator>> halves;
    for (int r = 0; r < 7; ++r)
        halves.push_back(w[r].split(r < 3 ? 0 : 1, r));
    std::vector<Communicator> local;
    for (auto &h : halves)
        local.push_back(*within(h));
    std::vector<Operation<Intercommunicator>> creating;
    for (int r = 0; r < 7; ++r)
        creating.push_back(Intercommunicator::create(local[size_t(r)], 0, w[r], r < 3 ? 3 : 0, 77));
    std::vector<Intercommunicator> inter;
    for (int r = 0; r < 7; ++r) {
        const auto c = within(creating[size_t(r)]);
        QVERIFY2(c, qPrintable(QStringLiteral("rank %1: %2").arg(r).arg(why(c))));
        inter.push_back(*c);
    }
    // Then each side sees its own group and the other as remote
    QVERIFY(inter[0].isInter());
    QCOMPARE(inter[1].size(), 3);
    QCOMPARE(inter[1].rank(), 1);
    QCOMPARE(inter[1].remoteSize(), 4);
    QCOMPARE(inter[1].remoteGroup(), (QList<int>{3, 4, 5, 6}));
    QCOMPARE(inter[5].remoteGroup(), (QList<int>{0, 1, 2}));
    QCOMPARE(inter[5].rank(), 2);
    QCOMPARE(inter[5].id(), inter[0].id());
    // And point-to-point goes across, with remote ranks in statuses
    for (int r = 0; r < 3; ++r)
        QVERIFY(within(inter[size_t(r)].send(r + 1, 3, QStringLiteral("manager %1").arg(r))));
    for (int r = 4; r < 7; ++r) {
        Request got = inter[size_t(r)].irecv(AnySource, 3);
        const auto status = within(received(got));
        QVERIFY2(status, qPrintable(why(status)));
        QCOMPARE(status->source, r - 4);
        QCOMPARE(*got.value<QString>(), QStringLiteral("manager %1").arg(r - 4));
    }
    QVERIFY(within(inter[3].send(2, 4, qint32(-3))));
    QCOMPARE(*within(inter[2].recv<qint32>(0, 4)), -3);
    // And collectives need an intracommunicator
    QCOMPARE(within(inter[0].barrier()).error().code, ErrorCode::BadConfiguration);
    QCOMPARE(inter[0].localCommunicator().group(), (QList<int>{0, 1, 2}));
    // When merged with the workers low, Then the workers come first
    for (bool managersHigh : {true, false}) {
        std::vector<Operation<Communicator>> merging;
        for (int r = 0; r < 7; ++r)
            merging.push_back(inter[size_t(r)].merge(r < 3 ? managersHigh : !managersHigh));
        const QList<int> expected = managersHigh ? QList<int>{3, 4, 5, 6, 0, 1, 2} : QList<int>{0, 1, 2, 3, 4, 5, 6};
        std::vector<Communicator> merged;
        for (int r = 0; r < 7; ++r) {
            const auto c = within(merging[size_t(r)]);
            QVERIFY2(c, qPrintable(QStringLiteral("rank %1: %2").arg(r).arg(why(c))));
            QCOMPARE(c->group(), expected);
            QCOMPARE(c->rank(), int(expected.indexOf(r)));
            merged.push_back(*c);
        }
        // And the merged one runs collectives over everybody
        QString ordered;
        for (int i : expected)
            ordered += QString::number(i);
        std::vector<Operation<QString>> joined;
        const ReduceOp<QString> concat = concatenation();
        for (int r = 0; r < 7; ++r)
            joined.push_back(merged[size_t(r)].allreduce(QString::number(r), concat));
        for (auto &j : joined)
            QCOMPARE(*within(j), ordered);
    }
    // A creation whose leader names a rank of its own group is refused everywhere
    std::vector<Operation<Intercommunicator>> bad;
    for (int r = 0; r < 3; ++r)
        bad.push_back(Intercommunicator::create(local[size_t(r)], 0, w[r], 0, 78));
    for (auto &b : bad)
        QCOMPARE(within(b).error().code, ErrorCode::InvalidRank);
}

QTEST_GUILESS_MAIN(TestCommunicators)
#include "tst_communicators.moc"
