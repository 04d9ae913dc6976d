// allgather through the public Communicator API between Worlds formed in
// this process: 1, 2, 3, 4, 6 and 7 ranks against what each rank sent, and large
// blocks read straight into the result list.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "player.h"

#include <mmpi/comm/communicator.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestAllgather : public CollectiveTest
{
    Q_OBJECT
public:
    TestAllgather() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void valuesAndRuns();
    void objects();
    void blocksGoIntoTheResultList();
};

void TestAllgather::valuesAndRuns()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        // One value per rank, by rank, everywhere
        QCOMPARE((onAll<QList<bool>>(w, [&](const Communicator &c, int r) { return c.allgather(r % 2 == 1); },
                                     [&](int, const QList<bool> &v) {
                                         QList<bool> expected;
                                         for (int i = 0; i < n; ++i)
                                             expected.append(i % 2 == 1);
                                         return differs(v, expected);
                                     })),
                 QString());
        // Runs of 0 and 2 items, concatenated
        for (int count : {0, 2}) {
            QCOMPARE((onAll<QList<quint8>>(w, [&](const Communicator &c, int r) {
                          const QList<quint8> mine = itemsOf<quint8>(r, count);
                          return c.allgather(std::span<const quint8>(mine));
                      }, [&](int, const QList<quint8> &v) {
                          QList<quint8> expected;
                          for (int i = 0; i < n; ++i)
                              expected += itemsOf<quint8>(i, count);
                          return differs(v, expected);
                      })),
                     QString());
        }
    }
}

void TestAllgather::objects()
{
    // Given a user's type from every rank, Then every rank has them all, by rank
    const auto playerOf = [](int r) { return Player{QStringLiteral("player %1").arg(r), qint32(r * r)}; };
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        QList<Player> expected;
        for (int i = 0; i < w.size(); ++i)
            expected.append(playerOf(i));
        QCOMPARE((onAll<QList<Player>>(w, [&](const Communicator &c, int r) { return c.allgather(playerOf(r)); },
                                       [&](int, const QList<Player> &v) { return differs(v, expected); })),
                 QString());
    }
}

// allgather of items whose memory is their form reads the large blocks it
// gets straight into the list it returns, at the block's place: for each
// pair of ranks, the block sent to the rank that started first arrives
// after it started and goes there (the other may come early, while nothing
// can take it, and is copied in); the list must be whole and in rank order
// either way.
void TestAllgather::blocksGoIntoTheResultList()
{
    const CommWorld &w = worlds().sized(3);
    constexpr qsizetype Block = 100'000; // 800 KB of double per block
    const auto [problem, placed] = placedIn<QList<double>>(w, [&](const Communicator &c, int r) {
        const QList<double> mine(Block, 0.5 + r);
        return c.allgather(std::span<const double>(mine));
    }, [&](int, const QList<double> &v) {
        QList<double> expected;
        for (int s = 0; s < 3; ++s)
            expected += QList<double>(Block, 0.5 + s);
        return v == expected ? QString() : QStringLiteral("allgather's blocks differ");
    });
    QCOMPARE(problem, QString());
    QVERIFY2(placed >= 3, qPrintable(QStringLiteral("allgather: %1 blocks read into place").arg(placed)));
}

QTEST_GUILESS_MAIN(TestAllgather)
#include "tst_allgather.moc"
