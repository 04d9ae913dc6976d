// BufferPool: large buffers come back for the next message; shared, small
// or too many bytes do not stay.
#include <mmpi/wire/bufferpool.h>

#include <QTest>
#include <QThread>

#include <memory>

using namespace mmpi;

class TestBufferPool : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        BufferPool::setLimit(16 * 1024 * 1024);
        BufferPool::clear();
    }
    void cleanupTestCase() { BufferPool::clear(); }

    void aRecycledBufferIsTakenAgain()
    {
        // Given a large buffer that nobody shares, recycled
        QByteArray first = BufferPool::take(1024 * 1024);
        QCOMPARE(first.size(), 1024 * 1024);
        const char *memory = first.constData();
        BufferPool::recycle(std::move(first));
        QCOMPARE(BufferPool::keptBytes(), 1024 * 1024);
        // When a message of a similar size needs one
        QByteArray second = BufferPool::take(700 * 1024);
        // Then it gets the same memory, at the size asked for
        QVERIFY(second.constData() == memory); // pointers (QCOMPARE compares C strings)
        QCOMPARE(second.size(), 700 * 1024);
        QCOMPARE(BufferPool::keptBytes(), 0);
    }

    void aSliceGivesBackTheWholeAllocation()
    {
        // Given the last slice of a message (sharing its allocation, past its start)
        QByteArray whole = BufferPool::take(512 * 1024);
        const char *memory = whole.constData();
        QByteArray::DataPointer d = whole.data_ptr();
        d.ptr += 256 * 1024;
        d.size = 1000;
        QByteArray slice(std::move(d));
        whole = QByteArray();
        // When it is recycled, then the next buffer starts at the allocation's start
        BufferPool::recycle(std::move(slice));
        const QByteArray again = BufferPool::take(400 * 1024);
        QVERIFY(again.constData() == memory); // pointers (QCOMPARE compares C strings)
    }

    void sharedSmallAndMismatchedBuffersAreNotKept()
    {
        QByteArray shared = BufferPool::take(256 * 1024);
        const QByteArray copy = shared; // still in use elsewhere
        BufferPool::recycle(std::move(shared));
        QCOMPARE(BufferPool::keptBytes(), 0);
        BufferPool::recycle(QByteArray(BufferPool::MinimumSize - 1, 'x'));
        QCOMPARE(BufferPool::keptBytes(), 0);
        BufferPool::recycle(QByteArray::fromRawData(copy.constData(), copy.size()));
        QCOMPARE(BufferPool::keptBytes(), 0);
        // A kept buffer much larger than asked for stays for a message that needs it
        QByteArray big(8 * 1024 * 1024, Qt::Uninitialized);
        const char *memory = big.constData();
        BufferPool::recycle(std::move(big));
        QVERIFY(BufferPool::take(100 * 1024).constData() != memory);
        QVERIFY(BufferPool::take(6 * 1024 * 1024).constData() == memory); // pointers (QCOMPARE compares C strings)
    }

    void theLimitHolds()
    {
        // Given a limit of 3 MiB, when five 1 MiB buffers come back
        BufferPool::setLimit(3 * 1024 * 1024);
        for (int i = 0; i < 5; ++i)
            BufferPool::recycle(QByteArray(1024 * 1024, Qt::Uninitialized));
        // Then the pool keeps three of them
        QCOMPARE(BufferPool::keptBytes(), 3 * 1024 * 1024);
        BufferPool::recycle(QByteArray(4 * 1024 * 1024, Qt::Uninitialized));
        QCOMPARE(BufferPool::keptBytes(), 3 * 1024 * 1024);
        // And a lower limit gives back the rest, 0 keeps nothing
        BufferPool::setLimit(1024 * 1024);
        QCOMPARE(BufferPool::keptBytes(), 1024 * 1024);
        BufferPool::setLimit(0);
        QCOMPARE(BufferPool::keptBytes(), 0);
        BufferPool::recycle(QByteArray(1024 * 1024, Qt::Uninitialized));
        QCOMPARE(BufferPool::keptBytes(), 0);
    }

    void threadsShareIt()
    {
        // Many threads taking and giving back at once end with whole, bounded buffers
        std::vector<std::unique_ptr<QThread>> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back(QThread::create([t] {
                for (int i = 0; i < 200; ++i) {
                    QByteArray b = BufferPool::take(100 * 1024 + (i % 7) * 4096);
                    b.fill(char(t));
                    if (b.count(char(t)) != b.size())
                        qFatal("a buffer was shared between threads");
                    BufferPool::recycle(std::move(b));
                }
            }));
            threads.back()->start();
        }
        for (auto &t : threads)
            QVERIFY(t->wait(30000));
        QVERIFY(BufferPool::keptBytes() <= BufferPool::limit());
    }
};

QTEST_GUILESS_MAIN(TestBufferPool)
#include "tst_bufferpool.moc"
