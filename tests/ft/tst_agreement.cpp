// Agreement when its coordinator dies while telling the decision: ranks 0
// and 1 are lost a few ms apart, and rank 1, the coordinator of the round on
// rank 0's loss, told rank 2 but not rank 3. Rank 2 applied it and retired
// the agreement; rank 3, asking rank 2 (its next coordinator) on the old
// control communicator, still gets that decision, and the retired agreement
// starts no round of its own. (Before, rank 2 had deleted it, and rank 3
// waited forever for an answer.) The test plays rank 1 on the wire.
#include "agreement.h"
#include "commworld.h"
#include "patience.h"

#include <QTest>

#include <vector>

using namespace mmpi;
using mmpi::detail::Agreement;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

namespace {

// The agreement's wire format (agreement.cpp): a proposal is round, unused
// id, failed ranks; a decision is round, policy, id, failed ranks.
constexpr int ProposeTag = 1;
constexpr int DecideTag = 2;

} // namespace

class TestAgreement : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void retiredAgreementTellsALateMemberTheDecision()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<Operation<Communicator>> dups;
        for (int r = 0; r < 4; ++r)
            dups.push_back(w[r].dup());
        QList<Communicator> control;
        for (auto &dup : dups) {
            const auto made = dup.wait();
            QVERIFY(made);
            control << *made;
        }
        const auto shrink = [](const QList<int> &) { return Policy::Shrink; };
        Agreement second(control[2], shrink), third(control[3], shrink);
        std::vector<Agreement::Decision> heardBySecond, heardByThird;
        connect(&second, &Agreement::decided, this, [&](const Agreement::Decision &d) { heardBySecond.push_back(d); });
        connect(&third, &Agreement::decided, this, [&](const Agreement::Decision &d) { heardByThird.push_back(d); });

        // Given rank 0 lost: ranks 2 and 3 propose round 1 to rank 1
        second.reportFailure(0);
        third.reportFailure(0);
        for (int from : {2, 3}) {
            const auto proposal = control[1].recv<QList<qint64>>(from, ProposeTag).wait();
            QVERIFY(proposal);
            QCOMPARE(proposal->value(0), 1);
            QCOMPARE(proposal->mid(2), QList<qint64>{0});
        }
        // When rank 1 decides and tells rank 2 only, then is lost
        const quint32 id = 4242;
        QVERIFY(control[1].send(2, DecideTag, QList<qint64>{1, qint64(Policy::Shrink), id, 0}).wait());
        QTRY_COMPARE_WITH_TIMEOUT(heardBySecond.size(), size_t(1), Patience);
        second.retire(); // applied: rank 2 is on the shrunk communicator now
        QCOMPARE(heardByThird.size(), size_t(0));
        third.reportFailure(1);

        // Then rank 3 gets rank 1's decision from rank 2
        QTRY_COMPARE_WITH_TIMEOUT(heardByThird.size(), size_t(1), Patience);
        const Agreement::Decision &d = heardByThird.front();
        QCOMPARE(d.round, 1u);
        QCOMPARE(d.failed, QList<int>{0});
        QCOMPARE(d.policy, Policy::Shrink);
        QCOMPARE(d.id, id);
        // And the retired agreement answered no more: rank 3's round 2 on the
        // old communicator (it knows of rank 1) gets no decision from it.
        QTest::qWait(300);
        QCOMPARE(heardBySecond.size(), size_t(1));
        QCOMPARE(heardByThird.size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestAgreement)
#include "tst_agreement.moc"
