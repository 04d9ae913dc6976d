// scatter and scatterv through the public Communicator API between Worlds
// formed in this process: every root for 1, 2, 3, 4, 6 and 7 ranks against what
// the root holds, and a root whose items do not divide into equal blocks.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "player.h"

#include <mmpi/comm/communicator.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestScatter : public CollectiveTest
{
    Q_OBJECT
public:
    TestScatter() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void scatterAndScatterv();
    void objectsEveryRoot();
    void indivisibleItemsFailEveryRank();
};

void TestScatter::scatterAndScatterv()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        for (int root = 0; root < n; ++root) {
            // One value per rank (any MessageCodec type)
            QList<QString> names;
            for (int r = 0; r < n; ++r)
                names.append(QStringLiteral("to %1 from %2").arg(r).arg(root));
            QCOMPARE((onAll<QString>(w, [&](const Communicator &c, int r) { return c.scatter(r == root ? names : QList<QString>{}, root); },
                                     [&](int r, const QString &v) { return differs(v, names.at(r)); })),
                     QString());
            // Equal blocks of 0 and 3 items
            for (int block : {0, 3}) {
                const QList<qint16> all = itemsOf<qint16>(root, block * n);
                QCOMPARE((onAll<QList<qint16>>(w, [&](const Communicator &c, int r) {
                              return c.scatter(std::span<const qint16>(r == root ? all : QList<qint16>{}), root);
                          }, [&](int r, const QList<qint16> &v) { return differs(v, all.mid(r * block, block)); })),
                         QString());
            }
            // Blocks of r items to rank r
            QList<int> counts;
            for (int r = 0; r < n; ++r)
                counts.append(r);
            const QList<float> all = itemsOf<float>(root, n * (n - 1) / 2);
            QCOMPARE((onAll<QList<float>>(w, [&](const Communicator &c, int r) {
                          return c.scatterv(std::span<const float>(all), r == root ? counts : QList<int>{}, root);
                      }, [&](int r, const QList<float> &v) { return differs(v, all.mid(r * (r - 1) / 2, r)); })),
                     QString());
        }
    }
}

void TestScatter::objectsEveryRoot()
{
    // Given a user's type, one to each rank from every root in turn
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        for (int root = 0; root < w.size(); ++root) {
            QList<Player> players;
            for (int r = 0; r < w.size(); ++r)
                players.append({QStringLiteral("player %1 of root %2").arg(r).arg(root), qint32(r * 10 - root)});
            // Then each rank gets its own
            QCOMPARE((onAll<Player>(w, [&](const Communicator &c, int r) { return c.scatter(r == root ? players : QList<Player>{}, root); },
                                    [&](int r, const Player &v) { return differs(v, players.at(r)); })),
                     QString());
        }
    }
}

void TestScatter::indivisibleItemsFailEveryRank()
{
    // An indivisible scatter at the root fails every rank
    const CommWorld &w = worlds().sized(3);
    const QList<qint32> seven(7, 1);
    QCOMPARE((allFail<QList<qint32>>(w, [&](const Communicator &c, int) { return c.scatter(std::span<const qint32>(seven), 1); },
                                     ErrorCode::CountMismatch)),
             QString());
    QCOMPARE(stillWorks(w), QString());
}

QTEST_GUILESS_MAIN(TestScatter)
#include "tst_scatter.moc"
