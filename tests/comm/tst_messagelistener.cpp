// MessageListener: every message on its communicator reaches the handler on
// the owner's thread, in order; one destroyed while a delivery is already on
// its way to the owner's thread never calls its handler again (a listener
// replaced while its owner lives on, as after a SHRINK); deliverPending()
// hands over at once what waits in the owner's event queue, exactly once.
#include "commworld.h"

#include <mmpi/comm/messagelistener.h>

#include <QTest>

#include <thread>

using namespace mmpi;
using mmpi::test::CommWorld;

class TestMessageListener : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void deliversInOrderOnTheOwnersThread()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QList<qint32> got;
        QObject owner;
        MessageListener listener(w[0], &owner, QStringLiteral("test"), [&](const Status &status, const Request &r) {
            QCOMPARE(QThread::currentThread(), owner.thread());
            QCOMPARE(status.source, 1);
            got << r.value<qint32>().value();
        });
        for (qint32 i = 0; i < 50; ++i)
            w[1].isend(0, 3, i);
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), 50, 20000);
        for (qint32 i = 0; i < 50; ++i)
            QCOMPARE(got.at(i), i);
    }

    void destroyedWithADeliveryQueuedStaysSilent()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QObject owner; // outlives both listeners
        int calledAfterDestruction = 0;
        bool destroyed = false;
        auto first = std::make_unique<MessageListener>(w[0], &owner, QStringLiteral("first"),
                                                       [&](const Status &, const Request &) {
            if (destroyed)
                ++calledAfterDestruction;
        });
        QVERIFY(w[1].send(0, 1, qint32(7)).wait());
        // The posted receive takes the message on the progress thread and
        // queues the delivery to this (blocked) thread.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        first.reset();
        destroyed = true;
        QTest::qWait(100);
        QCOMPARE(calledAfterDestruction, 0);
        // A listener made in its place hears what comes next.
        int heard = 0;
        MessageListener second(w[0], &owner, QStringLiteral("second"), [&](const Status &, const Request &) { ++heard; });
        QVERIFY(w[1].send(0, 2, qint32(8)).wait());
        QTRY_VERIFY_WITH_TIMEOUT(heard >= 1, 20000);
    }

    void deliverPendingHandsOverWhatHasArrivedOnce()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QObject owner;
        QList<int> tags;
        MessageListener listener(w[0], &owner, QStringLiteral("test"), [&](const Status &status, const Request &) {
            tags << status.tag;
        });
        QCOMPARE(listener.deliverPending(), 0);
        for (int tag = 1; tag <= 3; ++tag)
            QVERIFY(w[1].send(0, tag, qint32(tag)).wait());
        // This thread runs no event loop here: only deliverPending() can hand
        // the messages over (the engine matches them on its own thread).
        int delivered = 0;
        for (int i = 0; i < 1000 && delivered < 3; ++i) {
            delivered += listener.deliverPending();
            if (delivered < 3)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        QCOMPARE(delivered, 3);
        QCOMPARE(tags, (QList<int>{1, 2, 3}));
        // The deliveries already queued for the owner find them handed over.
        QTest::qWait(200);
        QCOMPARE(tags, (QList<int>{1, 2, 3}));
        QVERIFY(w[1].send(0, 4, qint32(4)).wait());
        QTRY_COMPARE_WITH_TIMEOUT(tags, (QList<int>{1, 2, 3, 4}), 20000);
    }
};

QTEST_GUILESS_MAIN(TestMessageListener)
#include "tst_messagelistener.moc"
