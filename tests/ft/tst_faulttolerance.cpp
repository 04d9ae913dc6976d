// FaultTolerance in real worlds of one process: after a member is lost the
// survivors agree and SHRINK (a contiguous communicator that works), BLANK
// (ranks kept, the blank refused at once), or ABORT (everyone stops with the
// reason); a second failure during the agreement, the coordinator's, hangs
// nobody and every survivor ends with the same communicator.
#include "protectedworld.h"
#include "patience.h"

#include <mmpi/ft/faulttolerance.h>

#include <QSignalSpy>
#include <QTimer>
#include <QTest>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::Patience;
using mmpi::test::Protected;
using mmpi::test::protectAll;
using mmpi::test::sumOfRanks;

class TestFaultTolerance : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void shrinkGivesTheSurvivorsAWorkingCommunicator()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w, Policy::Shrink);
        QVERIFY(!all.empty());

        // A receive that rank 3 posted on the old communicator, never matched
        const Request pending = w[3].irecv(0, 9);

        // When rank 2 ends without a goodbye
        w.kill(2);

        // Then every survivor shrinks to the same 3 ranks, in the old order
        QList<Communicator> comms;
        for (int r : {0, 1, 3}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 1, Patience);
            const auto args = all[r].reconfigured->at(0);
            QCOMPARE(args.at(0).value<Policy>(), Policy::Shrink);
            QCOMPARE(args.at(1).value<QList<int>>(), QList<int>{2});
            const Communicator c = all[r].ft->communicator();
            QCOMPARE(c.size(), 3);
            QCOMPARE(all[r].ft->rankMap(), (QList<int>{0, 1, 3}));
            QCOMPARE(c.rank(), r == 3 ? 2 : r);
            comms << c;
        }
        QCOMPARE(comms[0].id(), comms[2].id());
        // And collectives work on it: 1 + 2 + 3.
        QCOMPARE(sumOfRanks(comms), (QList<qint64>{6, 6, 6}));
        // The old one is revoked: even between survivors it fails at once.
        const auto old = w[0].send(1, 3, qint32(1)).wait();
        QVERIFY(!old);
        QCOMPARE(old.error().code, ErrorCode::Revoked);
        QVERIFY2(old.error().message.contains(QStringLiteral("was shrunk to 3 rank(s) after rank(s) 2 failed")),
                 qPrintable(old.error().message));
        QCOMPARE(w[1].barrier().wait().error().code, ErrorCode::Revoked);
        // The receive posted before was woken when the round began, not
        // left for the revoke.
        const auto stillPosted = pending.wait();
        QVERIFY(!stillPosted);
        QCOMPARE(stillPosted.error().code, ErrorCode::Reconfigured);
    }

    void blankKeepsRanksAndRefusesTheBlank()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w, Policy::Blank);
        QVERIFY(!all.empty());

        w.kill(1);

        for (int r : {0, 2, 3}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 1, Patience);
            QCOMPARE(all[r].reconfigured->at(0).at(0).value<Policy>(), Policy::Blank);
            QCOMPARE(all[r].ft->communicator().size(), 4);
            QCOMPARE(all[r].ft->blankRanks(), QList<int>{1});
        }
        // Talking to the blank fails at once, naming it; the others still talk.
        const Communicator c0 = all[0].ft->communicator();
        const auto toBlank = c0.recv<qint32>(1, 5).wait();
        QVERIFY(!toBlank);
        QVERIFY2(toBlank.error().message.contains(QStringLiteral("rank 1")), qPrintable(toBlank.error().message));
        const Request sent = all[2].ft->communicator().isend(0, 6, qint32(42));
        const auto got = c0.recv<qint32>(2, 6).wait();
        QVERIFY(got && *got == 42);
        QVERIFY(sent.wait());
    }

    // Issue 44: under BLANK the survivors compute on survivors(), made from
    // the decision on every member (no collective on the broken one); a
    // second loss replaces it, and the old one is revoked.
    void blankGivesTheSurvivorsACommunicatorOfTheLiveRanks()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w, Policy::Blank);
        QVERIFY(!all.empty());
        QCOMPARE(all[0].ft->survivors().id(), all[0].ft->communicator().id()); // nobody blank yet

        w.kill(1);
        QList<Communicator> live;
        for (int r : {0, 2, 3}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 1, Patience);
            const Communicator s = all[r].ft->survivors();
            QCOMPARE(s.size(), 3);
            QCOMPARE(s.group(), (QList<int>{0, 2, 3}));
            QVERIFY(s.id() != all[r].ft->communicator().id());
            live << s;
        }
        QCOMPARE(sumOfRanks(live), (QList<qint64>{6, 6, 6}));

        w.kill(3);
        QList<Communicator> fewer;
        for (int r : {0, 2}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 2, Patience);
            QCOMPARE(all[r].ft->survivors().group(), (QList<int>{0, 2}));
            fewer << all[r].ft->survivors();
        }
        QCOMPARE(sumOfRanks(fewer), (QList<qint64>{3, 3}));
        const auto old = live[0].barrier().wait();
        QVERIFY(!old);
        QCOMPARE(old.error().code, ErrorCode::Revoked);
    }

    // The way out when a recovery failed on some member: reconfigure() on one
    // of them gives every member a new round with the same policy and a
    // survivors' communicator with a new id, which works.
    void reconfigureStartsARoundForEveryMember()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w, Policy::Blank);
        QVERIFY(!all.empty());
        w.kill(2);
        for (int r : {0, 1, 3})
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 1, Patience);
        const quint32 before = all[0].ft->survivors().id();

        all[3].ft->reconfigure();

        QList<Communicator> live;
        for (int r : {0, 1, 3}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 2, Patience);
            const auto args = all[r].reconfigured->at(1);
            QCOMPARE(args.at(0).value<Policy>(), Policy::Blank);
            QCOMPARE(args.at(1).value<QList<int>>(), QList<int>{}); // nobody new
            QCOMPARE(all[r].ft->blankRanks(), QList<int>{2});
            live << all[r].ft->survivors();
        }
        QVERIFY(live[0].id() != before);
        QCOMPARE(live[0].id(), live[2].id());
        QCOMPARE(sumOfRanks(live), (QList<qint64>{6, 6, 6}));
    }

    void abortStopsEverySurvivorWithTheReason()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w, Policy::Abort);
        QVERIFY(!all.empty());

        w.kill(3);

        for (int r : {0, 1, 2}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].aborted->size(), 1, Patience);
            const Error reason = all[r].aborted->at(0).at(0).value<Error>();
            QVERIFY2(reason.message.contains(QStringLiteral("lost rank 3 (NodeTerm")), qPrintable(reason.message));
            QVERIFY2(reason.message.contains(QStringLiteral("the policy is ABORT")), qPrintable(reason.message));
            QTRY_COMPARE_WITH_TIMEOUT(w.world(r)->state(), World::State::Closed, Patience);
            QCOMPARE(all[r].reconfigured->size(), 0);
        }
    }

    // Rank 1 fails; rank 0, the coordinator of the agreement that follows,
    // dies as soon as that agreement starts on it.
    void coordinatorFailingDuringTheAgreementHangsNobody()
    {
        CommWorld w(QStringLiteral("local"), 5);
        QVERIFY(w.formed());
        auto all = protectAll(w, Policy::Shrink);
        QVERIFY(!all.empty());
        bool killed = false;
        QObject::connect(all[0].ft.get(), &FaultTolerance::reconfiguring, all[0].ft.get(), [&] {
            QTimer::singleShot(0, [&] {
                all[0].ft.reset();
                w.kill(0);
                killed = true;
            });
        });

        w.kill(1);
        QTRY_VERIFY_WITH_TIMEOUT(killed, Patience);

        // Every survivor ends with the communicator of 2, 3 and 4, whatever
        // rounds it took.
        QList<Communicator> comms;
        for (int r : {2, 3, 4}) {
            QTRY_COMPARE_WITH_TIMEOUT(all[r].ft->communicator().size(), 3, Patience);
            QVERIFY(!all[r].ft->isReconfiguring());
            QCOMPARE(all[r].ft->rankMap(), (QList<int>{2, 3, 4}));
            comms << all[r].ft->communicator();
        }
        QCOMPARE(comms[0].id(), comms[1].id());
        QCOMPARE(comms[1].id(), comms[2].id());
        QCOMPARE(sumOfRanks(comms), (QList<qint64>{6, 6, 6}));
    }
};

QTEST_GUILESS_MAIN(TestFaultTolerance)
#include "tst_faulttolerance.moc"
