// gather and gatherv through the public Communicator API between Worlds
// formed in this process: every root for 1, 2, 3, 4, 6 and 7 ranks against what
// each rank sent, large blocks read straight into the root's result list,
// bad roots and unequal counts.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "player.h"

#include <mmpi/comm/communicator.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestGather : public CollectiveTest
{
    Q_OBJECT
public:
    TestGather() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void gatherAndGatherv();
    void objectsEveryRoot();
    void blocksGoIntoTheResultList();
    void errors();
};

void TestGather::gatherAndGatherv()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        for (int root = 0; root < n; ++root) {
            // One value per rank, by rank, at the root only
            QCOMPARE((onAll<QList<QString>>(w, [&](const Communicator &c, int r) { return c.gather(QStringLiteral("r%1").arg(r), root); },
                                            [&](int r, const QList<QString> &v) {
                                                QList<QString> expected;
                                                for (int i = 0; r == root && i < n; ++i)
                                                    expected.append(QStringLiteral("r%1").arg(i));
                                                return differs(v, expected);
                                            })),
                     QString());
            // Runs of 0 and 4 items, concatenated
            for (int count : {0, 4}) {
                QCOMPARE((onAll<QList<qint32>>(w, [&](const Communicator &c, int r) {
                              const QList<qint32> mine = itemsOf<qint32>(r, count);
                              return c.gather(std::span<const qint32>(mine), root);
                          }, [&](int r, const QList<qint32> &v) {
                              QList<qint32> expected;
                              for (int i = 0; r == root && i < n; ++i)
                                  expected += itemsOf<qint32>(i, count);
                              return differs(v, expected);
                          })),
                         QString());
            }
            // Rank r sends r items of char16_t
            QCOMPARE((onAll<QList<QList<char16_t>>>(w, [&](const Communicator &c, int r) {
                          const QList<char16_t> mine = itemsOf<char16_t>(r, r);
                          return c.gatherv(std::span<const char16_t>(mine), root);
                      }, [&](int r, const QList<QList<char16_t>> &v) {
                          QList<QList<char16_t>> expected;
                          for (int i = 0; r == root && i < n; ++i)
                              expected.append(itemsOf<char16_t>(i, i));
                          return v == expected ? QString() : QStringLiteral("wrong gatherv");
                      })),
                     QString());
        }
    }
}

void TestGather::objectsEveryRoot()
{
    // Given a user's type from every rank, gathered at every root in turn
    const auto playerOf = [](int r) { return Player{QStringLiteral("player %1").arg(r), qint32(100 - r)}; };
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        for (int root = 0; root < w.size(); ++root) {
            // Then the root has them by rank, the others nothing
            QCOMPARE((onAll<QList<Player>>(w, [&](const Communicator &c, int r) { return c.gather(playerOf(r), root); },
                                           [&](int r, const QList<Player> &v) {
                                               QList<Player> expected;
                                               for (int i = 0; r == root && i < w.size(); ++i)
                                                   expected.append(playerOf(i));
                                               return differs(v, expected);
                                           })),
                     QString());
        }
    }
}

// The root of a gather of items whose memory is their form reads the large
// blocks it gets straight into the list it returns, at the block's place;
// it starts first here, so both blocks it gets are read into place.
void TestGather::blocksGoIntoTheResultList()
{
    const CommWorld &w = worlds().sized(3);
    constexpr qsizetype Block = 100'000; // 800 KB of double per block
    const auto [problem, placed] = placedIn<QList<double>>(w, [&](const Communicator &c, int r) {
        const QList<double> mine(Block, 0.25 + r);
        return c.gather(std::span<const double>(mine), 0);
    }, [&](int r, const QList<double> &v) {
        QList<double> expected;
        for (int s = 0; r == 0 && s < 3; ++s)
            expected += QList<double>(Block, 0.25 + s);
        return v == expected ? QString() : QStringLiteral("gather's blocks differ");
    });
    QCOMPARE(problem, QString());
    QCOMPARE(placed, 2);
}

void TestGather::errors()
{
    const CommWorld &w = worlds().sized(3);
    // A bad root: every rank fails at once, nobody waits
    QCOMPARE((allFail<QList<qint32>>(w, [](const Communicator &c, int) { return c.gather(qint32(1), -1); }, ErrorCode::InvalidRank)), QString());
    // Unequal gather counts: the root says which rank
    {
        std::vector<Operation<QList<qint32>>> ops;
        for (int r = 0; r < 3; ++r) {
            const QList<qint32> mine(r == 2 ? 1 : 2, r);
            ops.push_back(w[r].gather(std::span<const qint32>(mine), 0));
        }
        const auto atRoot = within(ops[0]);
        QVERIFY(!atRoot);
        QCOMPARE(atRoot.error().code, ErrorCode::CountMismatch);
        QVERIFY2(atRoot.error().message.contains(QLatin1String("rank 2")), qPrintable(atRoot.error().message));
    }
    // And everything still works afterwards
    QCOMPARE(stillWorks(w), QString());
}

QTEST_GUILESS_MAIN(TestGather)
#include "tst_gather.moc"
