// Outbox: a message larger than the chunk size leaves as a first fragment
// that announces its length and nothing else, then slices that share the
// message's own bytes (no copy), numbered in order; small frames overtake it
// between slices; nothing is written while the replay buffer is full.
#include "outbox.h"
#include "recordinglink.h"

#include <QtEndian>
#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;
using mmpi::test::RecordingLink;

namespace {

constexpr int Chunk = 64 * 1024;

Frame dataFrame(qsizetype bytes, int tag)
{
    return makeFrame(FrameKind::Data, ItemType::Byte, quint32(bytes), mmpi::test::patterned(bytes, tag));
}

bool within(const QByteArray &slice, const QByteArray &whole)
{
    return slice.constData() >= whole.constData() && slice.constData() + slice.size() <= whole.constData() + whole.size();
}

} // namespace

class TestOutbox : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void largeMessageLeavesAsLengthThenSharedSlices()
    {
        RecordingLink link;
        PeerStream stream(1, 1 << 30, 1 << 30);
        Outbox outbox(Chunk, 1 << 30);
        const Frame message = dataFrame(3 * Chunk + 100, 5);
        bool done = false;
        outbox.enqueue(message, [&](const Error &e) { done = !e.isError(); });
        outbox.pump(&link, stream);
        QVERIFY(done);
        QVERIFY(outbox.isEmpty());
        QCOMPARE(link.frames.size(), 5);
        const Frame &first = link.frames.first();
        QCOMPARE(first.header.kind, FrameKind::Fragment);
        QCOMPARE(first.header.flags, quint8(FirstFragment));
        QCOMPARE(first.payload.size(), qsizetype(FragmentLengthSize));
        QCOMPARE(qFromBigEndian<quint64>(first.payload.constData()), quint64(message.payload.size()));
        QByteArray joined;
        for (qsizetype i = 1; i < link.frames.size(); ++i) {
            const Frame &f = link.frames.at(i);
            QCOMPARE(f.header.kind, FrameKind::Fragment);
            QCOMPARE(f.header.flags, quint8(i + 1 == link.frames.size() ? LastFragment : 0));
            QCOMPARE(f.header.count, message.header.count);
            QVERIFY2(within(f.payload, message.payload), "a slice is a copy, not the message's own bytes");
            joined += f.payload;
        }
        QCOMPARE(joined, message.payload);
        for (qsizetype i = 0; i < link.frames.size(); ++i)
            QCOMPARE(link.frames.at(i).header.sequence, quint64(i + 1));
    }

    void smallFramesOvertakeBetweenSlices()
    {
        RecordingLink link;
        PeerStream stream(1, 1 << 30, 1 << 30);
        Outbox outbox(Chunk, 1 << 30);
        outbox.enqueue(dataFrame(2 * Chunk, 1), {});
        Frame small = dataFrame(10, 2);
        small.header.tag = 9; // another tag: it may overtake
        outbox.enqueue(small, {});
        outbox.pump(&link, stream);
        QCOMPARE(link.frames.size(), 4);
        QCOMPARE(link.frames.at(0).header.kind, FrameKind::Data);
        QCOMPARE(link.frames.at(0).header.tag, 9);
        QCOMPARE(link.frames.at(1).header.flags, quint8(FirstFragment));
    }

    void fullReplayBufferStopsEveryFragment()
    {
        RecordingLink link;
        // Room for one frame: the length goes, then nothing until an ack.
        PeerStream stream(1, 1, 1 << 30);
        Outbox outbox(Chunk, 1 << 30);
        outbox.enqueue(dataFrame(2 * Chunk, 3), {});
        outbox.pump(&link, stream);
        QCOMPARE(link.frames.size(), 1);
        QVERIFY(stream.acknowledge(1));
        outbox.pump(&link, stream);
        QCOMPARE(link.frames.size(), 2);
        QVERIFY(!outbox.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestOutbox)
#include "tst_outbox.moc"
