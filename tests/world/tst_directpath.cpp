// DirectPath: a thread that sends a frame itself writes it to the link and
// keeps it for a resend. A payload that borrows the sender's memory is
// written from there, and what is kept is a copy made after the write.
#include "directpath.h"
#include "recordinglink.h"

#include <mmpi/wire/bufferpool.h>

#include <QTest>
#include <QtEndian>

using namespace mmpi;
using namespace mmpi::detail;
using mmpi::test::patterned;
using mmpi::test::RecordingLink;

namespace {

constexpr int Chunk = 64 * 1024;

Frame borrowing(const QByteArray &source)
{
    return makeFrame(FrameKind::Data, ItemType::Byte, quint32(source.size()),
                     QByteArray::fromRawData(source.constData(), source.size()));
}

} // namespace

class TestDirectPath : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void borrowedPayloadsAreWrittenInPlaceAndResentFromCopies()
    {
        RecordingLink link;
        DirectPath path(1, 1 << 30, 1 << 30, 1 << 30);
        path.setLink(&link);
        // Given a small and a chunked frame that borrow their sender's buffers
        QByteArray small = patterned(100, 1), large = patterned(3 * Chunk + 100, 2);
        const QByteArray smallSent = QByteArray(small.constData(), small.size());
        const QByteArray largeSent = QByteArray(large.constData(), large.size());
        Frame first = borrowing(small);
        QVERIFY(path.trySend(first));
        QVERIFY(path.trySendFragmented(borrowing(large), Chunk));
        // Then each was written from the sender's buffer, not from a copy
        QCOMPARE(link.frames.size(), 1 + 1 + 4);
        QVERIFY(link.writtenFrom.at(0) == small.constData()); // pointers (QCOMPARE compares C strings)
        for (int i = 0; i < 4; ++i)
            QVERIFY(link.writtenFrom.at(2 + i) == large.constData() + qsizetype(i) * Chunk);
        // When the sender reuses its buffers and the link is made again
        small.fill('\xee');
        large.fill('\xee');
        RecordingLink again;
        const auto resent = path.resume(&again, 0, true);
        QVERIFY(resent);
        // Then every frame is resent, numbered as before, with the bytes sent
        QCOMPARE(*resent, qsizetype(6));
        QCOMPARE(again.frames.size(), 6);
        for (int i = 0; i < 6; ++i)
            QCOMPARE(again.frames.at(i).header.sequence, quint64(i + 1));
        QCOMPARE(again.written.at(0), smallSent);
        QCOMPARE(again.written.at(1), link.written.at(1)); // the length announced
        QByteArray joined;
        for (int i = 2; i < 6; ++i)
            joined += again.written.at(i);
        QCOMPARE(joined, largeSent);
        const auto within = [](const char *at, const QByteArray &buffer) {
            return at >= buffer.constData() && at < buffer.constData() + buffer.size();
        };
        for (const char *at : std::as_const(again.writtenFrom))
            QVERIFY(!within(at, small) && !within(at, large));
    }

    // A borrowed payload whose owner keeps its memory (a shared copy of the
    // sender's QList) is kept as it is: a resend comes from that memory too.
    void borrowedPayloadsWithAnOwnerAreKeptAsTheyAre()
    {
        RecordingLink link;
        DirectPath path(1, 1 << 30, 1 << 30, 1 << 30);
        path.setLink(&link);
        const auto small = std::make_shared<const QByteArray>(patterned(100, 3));
        const auto large = std::make_shared<const QByteArray>(patterned(3 * Chunk + 100, 4));
        Frame first = borrowing(*small);
        first.owner = small;
        Frame second = borrowing(*large);
        second.owner = large;
        QVERIFY(path.trySend(first));
        QVERIFY(path.trySendFragmented(second, Chunk));
        RecordingLink again;
        const auto resent = path.resume(&again, 0, true);
        QVERIFY(resent);
        QCOMPARE(*resent, qsizetype(6));
        QVERIFY(again.writtenFrom.at(0) == small->constData()); // pointers (QCOMPARE compares C strings)
        for (int i = 0; i < 4; ++i)
            QVERIFY(again.writtenFrom.at(2 + i) == large->constData() + qsizetype(i) * Chunk);
        QCOMPARE(again.written.at(0), *small);
        QByteArray joined;
        for (int i = 2; i < 6; ++i)
            joined += again.written.at(i);
        QCOMPARE(joined, *large);
    }

    // A borrowed message too large to be written whole: the chunks the link
    // takes at once leave from the caller's memory, the rest is handed over
    // as a copy, and later frames wait until it is on its way.
    void headOfABorrowedMessageLeavesFirst()
    {
        RecordingLink link;
        link.refuseAfter = 3; // the announcement and two chunks
        DirectPath path(1, 1 << 30, 1 << 30, 1 << 30);
        path.setLink(&link);
        QByteArray source = patterned(5 * Chunk, 4);
        const QByteArray sent(source.constData(), source.size());
        QList<std::pair<Frame, qint64>> rests;
        const auto head = path.trySendHead(borrowing(source), Chunk, [&](Frame message, qint64 offset) {
            rests.append({message, offset});
        });
        QCOMPARE(head, DirectPath::Head::Started);
        QCOMPARE(link.frames.size(), 3);
        QVERIFY(link.writtenFrom.at(1) == source.constData()); // pointers, not C strings
        QVERIFY(link.writtenFrom.at(2) == source.constData() + Chunk);
        // Then the rest is a copy that starts after the chunks written
        QCOMPARE(rests.size(), 1);
        QCOMPARE(rests.first().second, qint64(2 * Chunk));
        QVERIFY(!isBorrowed(rests.first().first.payload));
        QCOMPARE(rests.first().first.payload, sent);
        // And nothing takes the direct path past it until it is handed over
        link.refuseAfter = -1;
        Frame small = makeFrame(FrameKind::Data, ItemType::Byte, 8, patterned(8, 5));
        QVERIFY(!path.trySend(small));
        path.handedOver();
        QVERIFY(path.trySend(small));
        // And what was written is kept as a copy: resent, it has the bytes sent
        source.fill('\xee');
        RecordingLink again;
        QCOMPARE(*path.resume(&again, 0, true), qsizetype(4));
        QCOMPARE(again.written.at(1) + again.written.at(2), sent.first(2 * Chunk));
    }

    void headOfABorrowedMessageWholeOrNotAtAll()
    {
        DirectPath path(1, 1 << 30, 1 << 30, 1 << 30);
        RecordingLink refusing;
        refusing.refuseAfter = 0;
        path.setLink(&refusing);
        const QByteArray source = patterned(3 * Chunk, 6);
        int rests = 0;
        const auto count = [&](Frame, qint64) { ++rests; };
        // A link that takes nothing: nothing sent, nothing kept
        QCOMPARE(path.trySendHead(borrowing(source), Chunk, count), DirectPath::Head::NotSent);
        RecordingLink none;
        QCOMPARE(*path.resume(&none, 0, false), qsizetype(0));
        // A link that takes everything: all of it written, nothing handed over
        RecordingLink taking;
        path.setLink(&taking);
        QCOMPARE(path.trySendHead(borrowing(source), Chunk, count), DirectPath::Head::Whole);
        QCOMPARE(taking.frames.size(), 4);
        QCOMPARE(rests, 0);
    }

    void ownedPayloadsAreKeptWithoutACopy()
    {
        RecordingLink link;
        DirectPath path(1, 1 << 30, 1 << 30, 1 << 30);
        path.setLink(&link);
        Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, 100, patterned(100, 3));
        const char *bytes = frame.payload.constData();
        QVERIFY(path.trySend(frame));
        RecordingLink again;
        QVERIFY(path.resume(&again, 0, true));
        QVERIFY(again.writtenFrom.value(0) == bytes); // pointers, not C strings
    }

    // The thread that read the peer's frames sends the ack that came due
    // itself; where it cannot, the ack stays due for the progress thread.
    void readerSendsTheAckThatIsDue()
    {
        RecordingLink link;
        DirectPath path(1, 1 << 30, 4 * 1024, 1 << 30); // an ack per KiB received
        path.setLink(&link);
        const auto receive = [&path](quint64 sequence) {
            FrameHeader header = makeFrame(FrameKind::Data, ItemType::Byte, 0, {}).header;
            header.sequence = sequence;
            header.payloadLength = 600;
            bool due = false;
            const auto accepted = path.accept(header, due);
            return accepted ? due : false;
        };
        // Given one frame, not enough for an ack, then a second that makes one due
        QVERIFY(!receive(1));
        QVERIFY(receive(2));
        // When the reader sends it
        QVERIFY(path.trySendAck(0));
        // Then the peer hears it has everything up to frame 2, from rank 0
        QCOMPARE(link.frames.size(), 1);
        const Frame &ack = link.frames.at(0);
        QCOMPARE(ack.header.kind, FrameKind::Ack);
        QCOMPARE(ack.header.source, 0);
        QCOMPARE(ack.header.destination, 1);
        QCOMPARE(qFromBigEndian<quint64>(ack.payload.constData()), quint64(2));
        // And nothing is left for the progress thread, and counting starts again
        QVERIFY(!path.takeAck());
        QVERIFY(!receive(3));
        QVERIFY(receive(4));
        // When the link takes nothing now, the ack is not sent and stays due
        link.refuseAfter = 1;
        QVERIFY(!path.trySendAck(0));
        QCOMPARE(link.frames.size(), 1);
        QCOMPARE(path.takeAck(), std::optional<quint64>(4));
        // And without a link there is nothing to send it on
        QVERIFY(!receive(5));
        QVERIFY(receive(6));
        path.setLink(nullptr);
        QVERIFY(!path.trySendAck(0));
        QCOMPARE(path.takeAck(), std::optional<quint64>(6));
    }

    // The thread that read an ack forgets what it acknowledges, unless the
    // engine must hear of it: a malformed ack, one of frames never sent, or
    // a full replay buffer (the engine's queue waits for that room).
    void readerTakesAcksTheEngineNeedNotHear()
    {
        RecordingLink link;
        DirectPath path(1, 1 << 30, 1 << 30, 1 << 30);
        path.setLink(&link);
        for (int i = 0; i < 3; ++i) {
            Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, 100, patterned(100, i));
            QVERIFY(path.trySend(frame));
        }
        Frame malformed = ackFrame(1, 0, 2);
        malformed.payload.chop(1);
        QVERIFY(!path.tryAcknowledge(malformed));
        QVERIFY(!path.tryAcknowledge(ackFrame(1, 0, 4)));
        QVERIFY(path.tryAcknowledge(ackFrame(1, 0, 2)));
        // Then frame 2 is forgotten (a peer that says it lacks it cannot get
        // it again), and a link made again resends frame 3 alone
        RecordingLink again;
        QVERIFY(!path.resume(&again, 1, true));
        const auto resent = path.resume(&again, 2, true);
        QVERIFY(resent);
        QCOMPARE(*resent, qsizetype(1));
        QCOMPARE(again.frames.size(), 1);
        QCOMPARE(again.frames.at(0).header.sequence, quint64(3));

        // Given a path whose replay buffer is full
        DirectPath full(1, 1 << 30, 150, 1 << 30);
        full.setLink(&link);
        Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, 200, patterned(200, 7));
        QVERIFY(full.trySend(frame));
        QVERIFY(!full.hasRoom());
        // Then its acks are the engine's, and nothing was forgotten here
        QVERIFY(!full.tryAcknowledge(ackFrame(1, 0, 1)));
        QVERIFY(!full.hasRoom());
        QVERIFY(full.acknowledge(1));
        QVERIFY(full.hasRoom());
    }
};

QTEST_GUILESS_MAIN(TestDirectPath)
#include "tst_directpath.moc"
