// PeerStream: the progress thread numbers what it sends to a peer, keeps it
// until the peer acknowledges it, resends exactly what a resumed link lacks,
// checks the numbers it receives and says when an ack is due.
#include "peerstream.h"
#include "recordinglink.h"

#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;
using mmpi::test::patterned;
using mmpi::test::RecordingLink;

namespace {

Frame dataFrame(int bytes, int seed)
{
    return makeFrame(FrameKind::Data, ItemType::Byte, quint32(bytes), patterned(bytes, seed));
}

FrameHeader receivedHeader(quint64 sequence, quint32 payloadLength)
{
    FrameHeader header = makeFrame(FrameKind::Data, ItemType::Byte, 0, {}).header;
    header.sequence = sequence;
    header.payloadLength = payloadLength;
    return header;
}

} // namespace

class TestPeerStream : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void framesAreNumberedAndResentFromTheirOwnBytes()
    {
        RecordingLink link;
        PeerStream stream(1, 1 << 30, 1 << 30);
        // Given two data frames and a heartbeat sent
        Frame first = dataFrame(100, 1);
        const char *bytes = first.payload.constData();
        QVERIFY(stream.send(&link, first));
        QVERIFY(stream.send(&link, dataFrame(100, 2)));
        QVERIFY(stream.send(&link, makeFrame(FrameKind::Heartbeat, ItemType::Byte, 0, {})));
        // Then the data frames are numbered 1 and 2, the heartbeat 0
        QCOMPARE(link.frames.size(), 3);
        QCOMPARE(link.frames.at(0).header.sequence, quint64(1));
        QCOMPARE(link.frames.at(1).header.sequence, quint64(2));
        QCOMPARE(link.frames.at(2).header.sequence, quint64(0));
        QCOMPARE(stream.sent(), quint64(2));
        // When a link made again says the peer has nothing, then another
        // that it has frame 1
        RecordingLink again, third;
        QCOMPARE(stream.resume(&again, 0).value(), qsizetype(2));
        const auto resent = stream.resume(&third, 1);
        // Then both frames go again from the bytes first sent, not from a
        // copy, and after that frame 2 alone
        QVERIFY(again.writtenFrom.value(0) == bytes); // pointers, not C strings
        QVERIFY(resent);
        QCOMPARE(*resent, qsizetype(1));
        QCOMPARE(third.frames.at(0).header.sequence, quint64(2));
    }

    void acknowledgedFramesAreForgotten()
    {
        RecordingLink link;
        PeerStream stream(1, 1 << 30, 1 << 30);
        for (int i = 0; i < 3; ++i)
            QVERIFY(stream.send(&link, dataFrame(100, i)));
        QVERIFY(!stream.acknowledge(4)); // never sent
        QVERIFY(stream.acknowledge(2));
        // A peer that says it lacks frame 2 cannot get it again
        RecordingLink again;
        QVERIFY(!stream.resume(&again, 1));
        const auto resent = stream.resume(&again, 2);
        QVERIFY(resent);
        QCOMPARE(*resent, qsizetype(1));
        QCOMPARE(again.frames.at(0).header.sequence, quint64(3));
    }

    void aFullReplayBufferHoldsSendsBackUntilAnAck()
    {
        RecordingLink link;
        PeerStream stream(1, 150, 1 << 30);
        QVERIFY(stream.send(&link, dataFrame(200, 7)));
        QVERIFY(!stream.send(&link, dataFrame(10, 8)));
        QCOMPARE(link.frames.size(), 1);
        QVERIFY(stream.acknowledge(1));
        QVERIFY(stream.send(&link, dataFrame(10, 8)));
        QCOMPARE(link.frames.at(1).header.sequence, quint64(2));
    }

    void anAckIsDueAfterAQuarterOfTheReplayBuffer()
    {
        PeerStream stream(1, 4 * 1024, 1 << 30); // an ack per KiB received
        const auto receive = [&stream](quint64 sequence) {
            bool due = false;
            const auto accepted = stream.accept(receivedHeader(sequence, 600), due);
            return accepted && due;
        };
        QVERIFY(!receive(1));
        QVERIFY(receive(2));
        QCOMPARE(stream.takeAck(), std::optional<quint64>(2));
        QCOMPARE(stream.received(), quint64(2));
        // Counting starts again, and an ack of nothing new is not sent
        QVERIFY(!stream.takeAck());
        QVERIFY(!receive(3));
        QVERIFY(receive(4));
    }

    void aGapOrARepeatIsAProtocolViolation()
    {
        PeerStream stream(1, 1 << 30, 1 << 30);
        bool due = false;
        QVERIFY(stream.accept(receivedHeader(1, 10), due));
        const auto repeat = stream.accept(receivedHeader(1, 10), due);
        QVERIFY(!repeat);
        QCOMPARE(repeat.error().code, ErrorCode::ProtocolViolation);
        QVERIFY(!stream.accept(receivedHeader(3, 10), due));
        FrameHeader heartbeat = makeFrame(FrameKind::Heartbeat, ItemType::Byte, 0, {}).header;
        heartbeat.sequence = 5;
        QVERIFY(!stream.accept(heartbeat, due));
        QCOMPARE(stream.received(), quint64(1));
    }

    void restartBeginsBothStreamsAgain()
    {
        RecordingLink link;
        PeerStream stream(1, 1 << 30, 1 << 30);
        bool due = false;
        QVERIFY(stream.send(&link, dataFrame(10, 1)));
        QVERIFY(stream.accept(receivedHeader(1, 10), due));
        stream.restart();
        QCOMPARE(stream.sent(), quint64(0));
        QCOMPARE(stream.received(), quint64(0));
        QVERIFY(stream.accept(receivedHeader(1, 10), due));
        QVERIFY(stream.send(&link, dataFrame(10, 2)));
        QCOMPARE(link.frames.at(1).header.sequence, quint64(1));
        RecordingLink again;
        QCOMPARE(stream.resume(&again, 0).value(), qsizetype(1));
    }
};

QTEST_GUILESS_MAIN(TestPeerStream)
#include "tst_peerstream.moc"
