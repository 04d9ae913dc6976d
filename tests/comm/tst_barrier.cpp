// The barrier through the public Communicator API between Worlds formed in
// this process: nobody gets through before the last rank enters, at sizes
// 1, 2, 3, 4, 6 and 7; a null communicator refuses it.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "why.h"

#include <mmpi/comm/communicator.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestBarrier : public CollectiveTest
{
    Q_OBJECT
public:
    TestBarrier() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void nobodyPassesBeforeTheLast();
    void nullCommunicatorRefusesIt();
};

void TestBarrier::nobodyPassesBeforeTheLast()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        // Given every rank but the last in a barrier
        std::vector<Operation<void>> ops;
        for (int r = 0; r + 1 < n; ++r)
            ops.push_back(w[r].barrier());
        // Then none of them gets through
        QTest::qWait(30);
        for (const auto &op : ops)
            QVERIFY(!op.request().isFinished());
        // When the last one enters, Then all get through
        ops.push_back(w[n - 1].barrier());
        for (const auto &op : ops) {
            const auto ok = within(op);
            QVERIFY2(ok, qPrintable(why(ok)));
        }
    }
}

void TestBarrier::nullCommunicatorRefusesIt()
{
    QCOMPARE(within(Communicator().barrier()).error().code, ErrorCode::NotFormed);
}

QTEST_GUILESS_MAIN(TestBarrier)
#include "tst_barrier.moc"
