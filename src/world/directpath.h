// DirectPath: everything about one peer's link that threads other than the
// progress thread use. It sends a small frame at once from the caller's thread
// instead of handing it to the engine (saving two thread wake-ups, most of a
// small message's latency), only when nothing sent earlier still waits in the
// engine. It numbers every sequenced frame in the order it enters the link and
// keeps it in the replay buffer until the peer acknowledges it, so that a link
// made again after a break resumes exactly where the old one stopped; and it
// checks the numbers of the frames received. It also holds the link's reader
// for a thread that reads the peer's frames itself (FrameWaiter), counts the
// frames such a thread handed to the engine so no later frame overtakes, and
// puts the peer's fragmented message together for whichever thread reads it.
#pragma once

#include "reassembler.h"
#include "replaybuffer.h"

#include <mmpi/transport/link.h>
#include <mmpi/transport/linkreader.h>

#include <QMutex>

#include <atomic>
#include <memory>
#include <optional>

namespace mmpi::detail {

// Data, Fragment and Goodbye frames are numbered, acknowledged and replayed;
// heartbeats, acks and control messages belong to one link and carry 0.
bool isSequenced(FrameKind kind);
// The Ack that tells `destination` that `source` holds its frames up to `received`.
Frame ackFrame(int source, int destination, quint64 received);
// The frame number an Ack acknowledges; nullopt if it is malformed.
std::optional<quint64> ackedUpTo(const Frame &ack);

class DirectPath
{
public:
    DirectPath(int rank, qint64 queueLimit, qint64 replayLimit, qint64 maxMessageSize);

    // Progress thread: the link other threads may write to and read from
    // (nullptr: none). Cleared before the link is closed or deleted.
    void setLink(Link *link);
    // Progress thread, when a replacement node takes the lost peer's rank
    // (REBUILD): both streams start again from sequence 1, nothing kept.
    // The path has no link then, so no other thread is using it. The old
    // peer's message in progress is dropped.
    void restart();
    // Any thread: the link's reader, if it has one and the path is open.
    std::shared_ptr<LinkReader> reader() const;

    // Frames of this peer handed to the engine to handle later, in order
    // (a thread that read them could not deliver them itself). While any
    // wait, every later frame of the peer goes the same way.
    int readBacklog() const { return m_readBacklog.load(); }
    void deferRead() { ++m_readBacklog; }
    void deferredReadHandled() { --m_readBacklog; }

    // Any thread, before handing a frame to the engine instead; the engine
    // calls handedOver() once the frame is on the link (or has failed).
    void aboutToQueue() { ++m_queued; }
    void handedOver() { --m_queued; }

    // Any thread: send `frame` (numbered here) if the path is open, nothing
    // is queued ahead of it and the replay buffer has room. False: not sent.
    // A borrowed payload (isBorrowed()) is written from where it lies and
    // copied only for the replay buffer, after the write, in both methods;
    // not at all if the frame names its owner (Frame::owner).
    bool trySend(Frame &frame);
    // Any thread: send the Data message `message`, larger than `chunkSize`,
    // as Fragment frames at once, if the path is open, nothing is queued ahead
    // of it and the link and the replay buffer have room for all of it. False:
    // nothing sent.
    bool trySendFragmented(const Frame &message, int chunkSize);
    // Any thread: the start of a Data message whose payload is borrowed and
    // too large to be written whole here. The announcement and then whole
    // chunks are written from the caller's memory while the link takes each
    // at once, if the path is open and nothing is queued ahead; only then is
    // the message copied, what was written kept from the copy, and the rest
    // handed to `queueRest` (the copy and the offset it starts at), called
    // under this path's lock so that no frame sent later overtakes it, and
    // counted as queued (aboutToQueue()).
    enum class Head { NotSent, Whole, Started };
    using RestQueue = std::function<void(Frame message, qint64 offset)>;
    Head trySendHead(const Frame &message, int chunkSize, const RestQueue &queueRest);
    // Progress thread: number and write a sequenced frame to `link`. False
    // (nothing written) while the replay buffer is full.
    bool send(Link *link, Frame frame);
    bool hasRoom() const;
    // An Ack from the peer: it holds everything up to `upTo`.
    Result<void> acknowledge(quint64 upTo);
    // The thread that read the Ack frame `ack`: forget what it acknowledges
    // here, unless the engine must hear of it (false, nothing changed): the
    // frame is malformed or acknowledges too much, or the replay buffer is
    // full (the engine's queue waits for the room).
    bool tryAcknowledge(const Frame &ack);
    // Progress thread, on a link made again: write to `link` every frame the
    // peer (which received up to `peerReceived`) lacks, in order. The link
    // becomes the path's if `open` (not while this node says goodbye).
    Result<qsizetype> resume(Link *link, quint64 peerReceived, bool open);

    // The thread that read a frame from the peer, before anything else: is
    // its number the next one? A gap or a repeat is a ProtocolViolation.
    // `ackDue` is set once enough has arrived since the last ack (counted
    // from the header: a chunk read into place comes with no payload).
    Result<void> accept(const FrameHeader &header, bool &ackDue);
    // The last sequence number received in order, and sent.
    quint64 received() const { return m_received.load(); }
    quint64 sent() const;
    // Progress thread: an Ack for everything received so far is going out
    // (nullopt if nothing arrived since the last one).
    std::optional<quint64> takeAck();
    // The thread that read the peer's frames, when accept() said an ack is
    // due: send it from here (`source`: this node's rank), if the path is
    // open and nothing is queued ahead. False: not sent, still due.
    bool trySendAck(int source);

    // The thread that reads the peer's link (the progress thread, or a thread
    // holding its claim), after accept(): the fragment's part of the message
    // in progress (Reassembler::add). Either thread may go on with a message
    // the other began, so a wait that ends midway hands nothing back.
    struct Assembly
    {
        std::optional<Frame> message; // the whole message, after its last fragment
        qint64 placedBytes = 0;       // else, if it goes to a receiver's place: bytes there so far
    };
    // On an error the message is dropped; `wasPlaced` then says whether a
    // receiver's place had been written to (it must hear that it ends).
    Result<Assembly> addFragment(const Frame &fragment, const MessagePlacement &placement, bool &wasPlaced);
    // Where the payload of the fragment that starts with `header` may be
    // read straight to (Reassembler::placeNext), or nullptr.
    char *placeNextFragment(const FrameHeader &header, const MessagePlacement &placement);
    // Progress thread: the peer is gone; its message in progress never ends.
    void abandonMessage();

private:
    static Frame kept(const Frame &frame);
    void keepWritten(const Frame &announcement, const Frame &whole, int chunkSize, qint64 upTo);

    const int m_rank;
    mutable QMutex m_mutex; // guards m_link, m_reader and m_replay
    Link *m_link = nullptr;
    std::shared_ptr<LinkReader> m_reader;
    ReplayBuffer m_replay;
    bool m_blockedLogged = false;
    std::atomic<int> m_readBacklog = 0;
    std::atomic<int> m_queued = 0;
    const qint64 m_queueLimit;
    const qint64 m_ackBytes;
    std::atomic<quint64> m_received = 0;
    std::atomic<quint64> m_acked = 0;
    std::atomic<qint64> m_bytesSinceAck = 0;
    std::atomic<bool> m_ackRequested = false;
    // Only the link's reader uses it, but that thread changes (claims).
    QMutex m_assemblyMutex;
    Reassembler m_assembly;
};

} // namespace mmpi::detail
