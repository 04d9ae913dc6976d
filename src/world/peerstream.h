// PeerStream: the numbered stream of frames between this node and one peer,
// kept by the progress thread. It numbers every sequenced frame as it goes to
// the link and keeps it in the replay buffer until the peer acknowledges it,
// so that a link made again after a break resumes exactly where the old one
// stopped; it checks the numbers of the frames received, says when an ack is
// due, and puts the peer's fragmented messages together.
#pragma once

#include "reassembler.h"
#include "replaybuffer.h"

#include <mmpi/transport/link.h>

#include <atomic>
#include <optional>

namespace mmpi::detail {

// Data, Fragment and Goodbye frames are numbered, acknowledged and replayed;
// heartbeats, acks and control messages belong to one link and carry 0.
bool isSequenced(FrameKind kind);
// The Ack that tells `destination` that `source` holds its frames up to `received`.
Frame ackFrame(int source, int destination, quint64 received);
// The frame number an Ack acknowledges; nullopt if it is malformed.
std::optional<quint64> ackedUpTo(const Frame &ack);

class PeerStream
{
public:
    PeerStream(int rank, qint64 replayLimit, qint64 maxMessageSize);

    // A replacement node takes the lost peer's rank (REBUILD): both streams
    // start again from sequence 1, nothing kept; the old peer's message in
    // progress is dropped.
    void restart();

    // Number and write a sequenced frame to `link` (any other kind goes as
    // it is). False (nothing written) while the replay buffer is full.
    bool send(Link *link, Frame frame);
    // An Ack from the peer: it holds everything up to `upTo`.
    Result<void> acknowledge(quint64 upTo);
    // On a link made again: write to `link` every frame the peer (which
    // received up to `peerReceived`) lacks, in order; how many.
    Result<qsizetype> resume(Link *link, quint64 peerReceived);

    // A frame from the peer, before anything else: is its number the next
    // one? A gap or a repeat is a ProtocolViolation. `ackDue` is set once a
    // quarter of the peer's replay buffer has arrived since the last ack.
    Result<void> accept(const FrameHeader &header, bool &ackDue);
    // An Ack for everything received so far is going out (nullopt if
    // nothing arrived since the last one).
    std::optional<quint64> takeAck();
    // Any thread: the last sequence number received in order, and sent.
    quint64 received() const { return m_received.load(); }
    quint64 sent() const { return m_sent.load(); }
    // Progress thread: the frames the peer has acknowledged so far.
    quint64 acknowledged() const { return m_replay.acknowledged(); }

    // The fragment's part of the message in progress (Reassembler::add).
    struct Assembly
    {
        std::optional<Frame> message; // the whole message, after its last fragment
        qint64 placedBytes = 0;       // else, if it goes to a receiver's place: bytes there so far
    };
    // On an error the message is dropped; `wasPlaced` then says whether a
    // receiver's place had been written to (it must hear that it ends).
    Result<Assembly> addFragment(const Frame &fragment, const MessagePlacement &placement, bool &wasPlaced);
    // The peer is gone; its message in progress never ends.
    void abandonMessage();

private:
    const int m_rank;
    ReplayBuffer m_replay;
    bool m_blockedLogged = false;
    const qint64 m_ackBytes;
    qint64 m_bytesSinceAck = 0;
    quint64 m_acked = 0;
    // Written by the progress thread, read by World::streamPosition().
    std::atomic<quint64> m_received = 0;
    std::atomic<quint64> m_sent = 0;
    Reassembler m_assembly;
};

} // namespace mmpi::detail
