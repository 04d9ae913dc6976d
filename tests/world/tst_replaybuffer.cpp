// The replay buffer's rules: numbering from 1, cumulative acks that free
// memory, the frames a resuming peer lacks, and the claims it refuses.
#include "replaybuffer.h"

#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;

namespace {

Frame stamped(ReplayBuffer &buffer, int payloadBytes = 100)
{
    Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, quint32(payloadBytes), QByteArray(payloadBytes, 'x'));
    frame.header.sequence = buffer.nextSequence();
    buffer.keep(frame);
    return frame;
}

QList<quint64> sequences(const std::deque<Frame> &frames)
{
    QList<quint64> out;
    for (const Frame &f : frames)
        out << f.header.sequence;
    return out;
}

} // namespace

class TestReplayBuffer : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void numbersFromOneAndCountsBytes()
    {
        ReplayBuffer buffer(1000);
        QCOMPARE(buffer.nextSequence(), 1u);
        QCOMPARE(stamped(buffer).header.sequence, 1u);
        QCOMPARE(stamped(buffer).header.sequence, 2u);
        QCOMPARE(buffer.frameCount(), 2);
        QCOMPARE(buffer.bytes(), 2 * (FrameHeaderSize + 100));
        QCOMPARE(buffer.acknowledged(), 0u);
    }

    void fullUntilAcknowledged()
    {
        ReplayBuffer buffer(3 * (FrameHeaderSize + 100));
        for (int i = 0; i < 3; ++i) {
            QVERIFY(buffer.hasRoom());
            stamped(buffer);
        }
        QVERIFY(!buffer.hasRoom());
        QVERIFY(buffer.acknowledge(1));
        QVERIFY(buffer.hasRoom());
        QCOMPARE(buffer.frameCount(), 2);
        QCOMPARE(buffer.acknowledged(), 1u);
    }

    void oldAckChangesNothingButAFutureOneIsAnError()
    {
        ReplayBuffer buffer(10000);
        for (int i = 0; i < 4; ++i)
            stamped(buffer);
        QVERIFY(buffer.acknowledge(3));
        QVERIFY(buffer.acknowledge(2));
        QCOMPARE(buffer.frameCount(), 1);
        const auto future = buffer.acknowledge(5);
        QVERIFY(!future);
        QCOMPARE(future.error().code, ErrorCode::ProtocolViolation);
        QCOMPARE(future.error().message, QStringLiteral("acknowledgement of frame 5, but only 4 were sent"));
        QCOMPARE(buffer.frameCount(), 1);
    }

    void framesAfterWhatThePeerReceived()
    {
        ReplayBuffer buffer(100000);
        for (int i = 0; i < 6; ++i)
            stamped(buffer);
        QVERIFY(buffer.acknowledge(2));
        // The peer got 4 (acks for 3 and 4 were lost with the link).
        const auto missing = buffer.framesAfter(4);
        QVERIFY(missing);
        QCOMPARE(sequences(*missing), (QList<quint64>{5, 6}));
        QCOMPARE(buffer.acknowledged(), 4u);
        // Everything: nothing to resend; then new frames go on from 7.
        const auto none = buffer.framesAfter(6);
        QVERIFY(none && none->empty());
        QCOMPARE(stamped(buffer).header.sequence, 7u);
    }

    void resumeClaimsThatBreakExactlyOnceAreRefused()
    {
        ReplayBuffer buffer(100000);
        for (int i = 0; i < 5; ++i)
            stamped(buffer);
        QVERIFY(buffer.acknowledge(3));
        // Less than it acknowledged: frames 3 and before are gone from here.
        const auto behind = buffer.framesAfter(2);
        QVERIFY(!behind);
        QCOMPARE(behind.error().message,
                 QStringLiteral("the peer resumes after frame 2, but it had acknowledged up to 3"));
        // More than was ever sent.
        const auto ahead = buffer.framesAfter(9);
        QVERIFY(!ahead);
        QCOMPARE(ahead.error().code, ErrorCode::ProtocolViolation);
        QCOMPARE(buffer.frameCount(), 2);
    }
};

QTEST_GUILESS_MAIN(TestReplayBuffer)
#include "tst_replaybuffer.moc"
