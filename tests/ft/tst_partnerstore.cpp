// Partner copies in one process: every node's checkpoint reaches the next
// rank whole; a later checkpoint sends only the blocks that changed; the copy
// is on the partner's disk and outlives its owner; a partner that lost its
// copy gets a whole one next time; k partners keep one each.
#include "commworld.h"
#include "storedstate.h"
#include "patience.h"
#include "why.h"

#include <mmpi/ft/partnerstore.h>

#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

using namespace mmpi;
using mmpi::test::why;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

namespace {

struct Node : mmpi::test::StoredState
{
    using StoredState::StoredState;
    std::unique_ptr<PartnerStore> partners;
    std::unique_ptr<QSignalSpy> sent;
    std::unique_ptr<QSignalSpy> stored;
};

std::vector<std::unique_ptr<Node>> nodesFor(const CommWorld &w, const QTemporaryDir &dir, int partnerCount = 1)
{
    std::vector<std::unique_ptr<Node>> nodes;
    for (int r = 0; r < w.size(); ++r) {
        auto node = std::make_unique<Node>(dir.filePath(QStringLiteral("rank%1").arg(r)));
        Node *n = node.get();
        n->state = QByteArray(300 * 1024, char('a' + r)); // 5 blocks, the last one short
        n->partners = std::make_unique<PartnerStore>(w[r], &n->store);
        n->partners->setPartnerCount(partnerCount);
        n->sent = std::make_unique<QSignalSpy>(n->partners.get(), &PartnerStore::copySent);
        n->stored = std::make_unique<QSignalSpy>(n->partners.get(), &PartnerStore::copyStored);
        nodes.push_back(std::move(node));
    }
    return nodes;
}

} // namespace

class TestPartnerStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void copiesAreWholeThenIncremental()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesFor(w, dir);
        QCOMPARE(nodes[0]->partners->partners(), QList<int>{1});
        QCOMPARE(nodes[2]->partners->partners(), QList<int>{0});

        // When every node checkpoints, the next rank keeps its copy, whole.
        for (auto &n : nodes)
            QVERIFY(n->store.checkpoint());
        for (int r = 0; r < 3; ++r) {
            Node &keeper = *nodes[(r + 1) % 3];
            QTRY_COMPARE_WITH_TIMEOUT(keeper.stored->size(), 1, Patience);
            const auto copy = keeper.partners->copyOf(r);
            QVERIFY2(copy, qPrintable(why(copy)));
            QCOMPARE(copy->epoch, 1u);
            QCOMPARE(copy->state, nodes[r]->state);
            // The first copy carried every block.
            QVERIFY(nodes[r]->sent->at(0).at(2).toLongLong() > 300 * 1024);
        }

        // When rank 0 changes one block and checkpoints again, only that
        // block travels, and the copy is the new state.
        QTest::qWait(100); // the acknowledgement of the first copy is back
        nodes[0]->state[70 * 1024] = 'Z';
        QVERIFY(nodes[0]->store.checkpoint());
        QTRY_COMPARE_WITH_TIMEOUT(nodes[1]->stored->size(), 2, Patience);
        const qint64 bytes = nodes[0]->sent->at(1).at(2).toLongLong();
        QVERIFY2(bytes < 70 * 1024 && bytes > 64 * 1024, qPrintable(QString::number(bytes)));
        const auto copy = nodes[1]->partners->copyOf(0);
        QVERIFY(copy);
        QCOMPARE(copy->epoch, 2u);
        QCOMPARE(copy->state, nodes[0]->state);
        // A state that shrank: only the header travels, and the copy shrinks.
        QTest::qWait(100);
        nodes[0]->state.truncate(100 * 1024);
        QVERIFY(nodes[0]->store.checkpoint());
        QTRY_COMPARE_WITH_TIMEOUT(nodes[1]->stored->size(), 3, Patience);
        QCOMPARE(nodes[1]->partners->copyOf(0)->state, nodes[0]->state);
        // The short last block changed length: it travels, the first does not.
        const qint64 shrunk = nodes[0]->sent->at(2).at(2).toLongLong();
        QVERIFY2(shrunk > 36 * 1024 && shrunk < 37 * 1024, qPrintable(QString::number(shrunk)));
    }

    void copyOutlivesItsOwnerAndTheKeepersObject()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesFor(w, dir);
        QVERIFY(nodes[0]->store.checkpoint());
        QTRY_COMPARE_WITH_TIMEOUT(nodes[1]->stored->size(), 1, Patience);
        const QByteArray original = nodes[0]->state;
        // Rank 0's device dies, and so does rank 1's PartnerStore object.
        w.kill(0);
        nodes[0].reset();
        nodes[1]->partners.reset();
        // A new one on rank 1 reads the copy from disk.
        PartnerStore again(w[1], &nodes[1]->store);
        const auto copy = again.copyOf(0);
        QVERIFY2(copy, qPrintable(why(copy)));
        QCOMPARE(copy->state, original);
    }

    void partnerThatLostItsCopyGetsAWholeOne()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesFor(w, dir);
        QSignalSpy acked(nodes[0]->partners.get(), &PartnerStore::copyAcknowledged);
        QVERIFY(nodes[0]->store.checkpoint());
        QTRY_COMPARE_WITH_TIMEOUT(acked.size(), 1, Patience);
        // Rank 1 loses what it held (its storage wiped, its object new).
        nodes[1]->partners.reset();
        QVERIFY(QDir(nodes[1]->store.directory() + QStringLiteral("/partners")).removeRecursively());
        nodes[1]->partners = std::make_unique<PartnerStore>(w[1], &nodes[1]->store);
        QSignalSpy stored(nodes[1]->partners.get(), &PartnerStore::copyStored);
        nodes[0]->state[0] = 'Y';
        // The incremental copy cannot add up there: it is refused, and the
        // next copy goes whole. (Should the keeper have taken it after all,
        // its copy must be exact; either way the keeper ends with the state.)
        QVERIFY(nodes[0]->store.checkpoint());
        QTRY_COMPARE_WITH_TIMEOUT(acked.size(), 2, Patience);
        quint64 expected = 2;
        if (!acked.at(1).at(2).toBool()) {
            QCOMPARE(stored.size(), 0);
            const qint64 increment = nodes[0]->sent->at(1).at(2).toLongLong();
            QVERIFY(nodes[0]->store.checkpoint());
            QTRY_COMPARE_WITH_TIMEOUT(stored.size(), 1, Patience);
            // Whole this time: every block travelled.
            QVERIFY2(nodes[0]->sent->at(2).at(2).toLongLong() > 300 * 1024 && increment < 70 * 1024,
                     qPrintable(QStringLiteral("%1 then %2 bytes").arg(increment).arg(nodes[0]->sent->at(2).at(2).toLongLong())));
            expected = 3;
        }
        QCOMPARE(nodes[1]->partners->copyOf(0)->state, nodes[0]->state);
        QCOMPARE(nodes[1]->partners->copyOf(0)->epoch, expected);
    }

    void kPartnersKeepOneEach()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesFor(w, dir, 2);
        QCOMPARE(nodes[3]->partners->partners(), (QList<int>{0, 1}));
        QVERIFY(nodes[3]->store.checkpoint());
        for (int keeper : {0, 1}) {
            QTRY_COMPARE_WITH_TIMEOUT(nodes[keeper]->stored->size(), 1, Patience);
            QCOMPARE(nodes[keeper]->partners->copyOf(3)->state, nodes[3]->state);
        }
        QVERIFY(!nodes[2]->partners->copyOf(3));
    }

    void forgedCopiesAreRefused()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesFor(w, dir);
        const auto header = [](quint64 size, quint32 blockSize, quint32 count) {
            QByteArray m(8 + 8 + 4 + 32 + 4, '\0');
            qToBigEndian<quint64>(7, m.data());
            qToBigEndian<quint64>(size, m.data() + 8);
            qToBigEndian<quint32>(blockSize, m.data() + 16);
            qToBigEndian<quint32>(count, m.data() + 52);
            return m;
        };
        QByteArray outside = header(1000, 64 * 1024, 1);
        outside.append(QByteArray::fromHex("00000003") + QByteArray::fromHex("00000010") + QByteArray(16, 'x'));
        const QList<QByteArray> forged{
            QByteArray("short"),
            header(8LL * 1024 * 1024 * 1024, 64 * 1024, 0), // 8 GiB
            header(1000, 4096, 0),                          // another block size
            header(1000, 64 * 1024, 5),                     // 5 blocks of a 1-block state
            outside,                                        // block 3 of a 1-block state
            header(1000, 64 * 1024, 0),                     // no block: the hash cannot match
        };
        for (const QByteArray &m : forged)
            QVERIFY(w[0].send(1, PartnerStore::DefaultTagBase, m).wait());
        // A real one after them is still taken.
        QVERIFY(nodes[0]->store.checkpoint());
        QTRY_COMPARE_WITH_TIMEOUT(nodes[1]->stored->size(), 1, Patience);
        QCOMPARE(nodes[1]->partners->copyOf(0)->state, nodes[0]->state);
        QCOMPARE(nodes[1]->partners->copyOf(0)->epoch, 1u);
    }
};

QTEST_GUILESS_MAIN(TestPartnerStore)
#include "tst_partnerstore.moc"
