// alltoall through the public Communicator API between Worlds formed in
// this process: 1, 2, 3, 4, 6 and 7 ranks against what each rank sent to each,
// blocks that leave from the caller's items, large blocks read straight
// into the result list, dropped results' buffers reused, unequal blocks.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "player.h"
#include "why.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/wire/bufferpool.h>

#include <QScopeGuard>
#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestAlltoall : public CollectiveTest
{
    Q_OBJECT
public:
    TestAlltoall() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void valuesAndBlocks();
    void objects();
    void blocksLeaveFromTheCallersItems();
    void blocksGoIntoTheResultList();
    void droppedResultsGiveTheirBuffersBack();
    void unequalBlocksNameTheRank();
};

void TestAlltoall::valuesAndBlocks()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        // Rank s sends "s->d" to d; rank d gets them by source
        QCOMPARE((onAll<QList<QString>>(w, [&](const Communicator &c, int r) {
                      QList<QString> out;
                      for (int d = 0; d < n; ++d)
                          out.append(QStringLiteral("%1->%2").arg(r).arg(d));
                      return c.alltoall(out);
                  }, [&](int r, const QList<QString> &v) {
                      QList<QString> expected;
                      for (int s = 0; s < n; ++s)
                          expected.append(QStringLiteral("%1->%2").arg(s).arg(r));
                      return differs(v, expected);
                  })),
                 QString());
        // Blocks of two items
        QCOMPARE((onAll<QList<qint64>>(w, [&](const Communicator &c, int r) {
                      QList<qint64> out;
                      for (int d = 0; d < n; ++d)
                          out << qint64(r * 100 + d) << qint64(-r);
                      return c.alltoall(std::span<const qint64>(out));
                  }, [&](int r, const QList<qint64> &v) {
                      QList<qint64> expected;
                      for (int s = 0; s < n; ++s)
                          expected << qint64(s * 100 + r) << qint64(-s);
                      return differs(v, expected);
                  })),
                 QString());
    }
}

void TestAlltoall::objects()
{
    // Given a user's type from every rank to every rank, Then each rank gets its own, by source
    const auto playerOf = [](int from, int to) { return Player{QStringLiteral("%1 to %2").arg(from).arg(to), qint32(from - to)}; };
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        QCOMPARE((onAll<QList<Player>>(w, [&](const Communicator &c, int r) {
                      QList<Player> out;
                      for (int d = 0; d < n; ++d)
                          out.append(playerOf(r, d));
                      return c.alltoall(out);
                  }, [&](int r, const QList<Player> &v) {
                      QList<Player> expected;
                      for (int s = 0; s < n; ++s)
                          expected.append(playerOf(s, r));
                      return differs(v, expected);
                  })),
                 QString());
    }
}

// Byte blocks leave from the caller's items (small ones whole, large ones in
// chunks): overwritten as soon as alltoall() returns, they still arrive as
// they were.
void TestAlltoall::blocksLeaveFromTheCallersItems()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        for (const qsizetype block : {qsizetype(3), qsizetype(300 * 1024 + 5)}) {
            const auto byteOf = [](int from, int to, qsizetype i) { return quint8(from * 31 + to * 7 + i); };
            QCOMPARE((onAll<QList<quint8>>(w, [&](const Communicator &c, int r) {
                          QList<quint8> out(block * n);
                          for (int d = 0; d < n; ++d)
                              for (qsizetype i = 0; i < block; ++i)
                                  out[d * block + i] = byteOf(r, d, i);
                          auto op = c.alltoall(std::span<const quint8>(out));
                          out.fill(0xee);
                          return op;
                      }, [&](int r, const QList<quint8> &v) {
                          QList<quint8> expected;
                          for (int s = 0; s < n; ++s)
                              for (qsizetype i = 0; i < block; ++i)
                                  expected.append(byteOf(s, r, i));
                          return v == expected ? QString() : QStringLiteral("%1-byte blocks differ").arg(block);
                      })),
                     QString());
        }
    }
}

// alltoall of items whose memory is their form reads the large blocks it
// gets straight into the list it returns, at the block's place: for each
// pair of ranks, the block sent to the rank that started first arrives
// after it started and goes there (the other may come early, while nothing
// can take it, and is copied in); the list must be whole and in rank order
// either way.
void TestAlltoall::blocksGoIntoTheResultList()
{
    const CommWorld &w = worlds().sized(3);
    constexpr qsizetype Block = 100'000; // 800 KB of qint64 per block
    const auto valueOf = [](int from, int to, qsizetype i) { return qint64(from) << 40 | qint64(to) << 32 | i; };
    const auto [problem, placed] = placedIn<QList<qint64>>(w, [&](const Communicator &c, int r) {
        QList<qint64> out(Block * 3);
        for (int d = 0; d < 3; ++d)
            for (qsizetype i = 0; i < Block; ++i)
                out[d * Block + i] = valueOf(r, d, i);
        return c.alltoall(std::span<const qint64>(out));
    }, [&](int r, const QList<qint64> &v) {
        if (v.size() != 3 * Block)
            return QStringLiteral("%1 items").arg(v.size());
        for (int s = 0; s < 3; ++s)
            for (qsizetype i = 0; i < Block; ++i)
                if (v.at(s * Block + i) != valueOf(s, r, i))
                    return QStringLiteral("item %1 of rank %2's block").arg(i).arg(s);
        return QString();
    });
    QCOMPARE(problem, QString());
    QVERIFY2(placed >= 3, qPrintable(QStringLiteral("alltoall: %1 blocks read into place").arg(placed)));
}

// A large collective's buffers (the part it encoded for itself, the parts it
// received) go back to the BufferPool when its result is dropped, so that the
// next one does not page-fault on fresh memory.
void TestAlltoall::droppedResultsGiveTheirBuffersBack()
{
    BufferPool::clear();
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    constexpr qsizetype Block = 256 * 1024;
    {
        // Given alltoalls of 256 KiB byte arrays (one per rank: received into
        // buffers of the world's) whose results are still held
        QList<Operation<QList<QByteArray>>> calls;
        for (int r = 0; r < 2; ++r)
            calls.append(w[r].alltoall(QList<QByteArray>{QByteArray(Block, char('a' + r)),
                                                         QByteArray(Block, char('c' + r))}));
        for (int r = 0; r < 2; ++r) {
            const auto got = calls[r].wait();
            QVERIFY2(got, qPrintable(why(got)));
            QCOMPARE(got->size(), 2);
            QCOMPARE(got->at(0), QByteArray(Block, char(r == 0 ? 'a' : 'c')));
            QCOMPARE(got->at(1), QByteArray(Block, char(r == 0 ? 'b' : 'd')));
        }
        // (the senders' copies come back as the peers acknowledge them; so
        // do those of earlier tests' worlds, which are still open: emptied
        // here, with room, so that only what the drop gives back counts)
        QTest::qWait(300);
        const qint64 limit = BufferPool::limit();
        const auto restore = qScopeGuard([limit] { BufferPool::setLimit(limit); });
        BufferPool::setLimit(256 * 1024 * 1024);
        BufferPool::clear();
        const qint64 before = BufferPool::keptBytes();
        // When the results are dropped
        calls.clear();
        // Then each rank's received part is kept for reuse (its own is the
        // caller's array, which the caller still holds)
        QVERIFY2(BufferPool::keptBytes() - before >= 2 * Block,
                 qPrintable(QStringLiteral("%1 bytes kept before, %2 after")
                                .arg(before).arg(BufferPool::keptBytes())));
    }
}

void TestAlltoall::unequalBlocksNameTheRank()
{
    const CommWorld &w = worlds().sized(3);
    // Unequal alltoall blocks, small and large (placed in the result list
    // where they fit): every rank names rank 2, whose blocks are longer
    for (const qsizetype block : {qsizetype(2), qsizetype(100'000)}) {
        std::vector<Operation<QList<qint32>>> ops;
        for (int r = 0; r < 3; ++r) {
            const QList<qint32> mine(3 * (r == 2 ? block + 1 : block), r);
            ops.push_back(w[r].alltoall(std::span<const qint32>(mine)));
        }
        for (int r = 0; r < 3; ++r) {
            const auto got = within(ops[size_t(r)]);
            QVERIFY2(!got, qPrintable(QStringLiteral("rank %1 got %2 items").arg(r).arg(got ? got->size() : 0)));
            QCOMPARE(got.error().code, ErrorCode::CountMismatch);
            QVERIFY2(got.error().message.contains(QLatin1String("rank 2")), qPrintable(got.error().message));
        }
    }
    // And everything still works afterwards
    QCOMPARE(stillWorks(w), QString());
}

QTEST_GUILESS_MAIN(TestAlltoall)
#include "tst_alltoall.moc"
