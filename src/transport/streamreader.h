// StreamReader: the read half of a NativeStream: the descriptor, the decoding
// state, and an epoll set holding the descriptor, which the stream's notifier
// watches instead of the socket. A thread that claims the reader takes the
// socket out of that set, so the progress thread is not woken for input
// another thread is reading; release() puts it back, and after park() the
// ParkSweeper does unless the claimer returns first.
#pragma once

#include <mmpi/core/error.h>
#include <mmpi/transport/linkreader.h>
#include <mmpi/wire/framedecoder.h>

#include <QByteArray>
#include <QRecursiveMutex>

#include <atomic>
#include <memory>
#include <optional>

namespace mmpi::detail {

class StreamReader final : public LinkReader, public std::enable_shared_from_this<StreamReader>
{
public:
    enum class Status {
        Drained, // read what there was (or the budget); the notifier fires for more
        Held,    // paused, stopped, or the owner's delivery said stop
        Claimed, // another thread reads it now
        Ended,   // the peer closed its end
        Failed,  // I/O error or malformed input (see error)
    };
    struct Outcome
    {
        Status status = Status::Drained;
        Error error;
    };
    // Returns false to stop delivering (the owner paused or closed).
    using OwnerDelivery = std::function<bool(Frame &&)>;

    // Takes ownership of `descriptor` (made non-blocking).
    StreamReader(int descriptor, DecoderLimits limits);
    ~StreamReader() override;

    // What the owner's read notifier watches (the epoll set).
    int pollDescriptor() const { return m_epoll; }
    void prependReceived(const QByteArray &bytes);
    // The owner's thread: read at most `budget` bytes, delivering each frame.
    Outcome readForOwner(qint64 budget, const OwnerDelivery &deliver);
    // Whole frames wait in the buffer (delivered on the next read).
    bool hasStagedFrame() const;
    void setPaused(bool paused) { m_paused = paused; }
    // No more reading, by anyone.
    void stop() { m_stopped = true; }
    // The owner is going: close the socket, or, while a claimer polls it,
    // shut it down (the peer sees the end now) and let release() close it.
    void closeDescriptor();
    // Runs with the reader locked, on a thread not the owner's, when the
    // owner must come and read although the socket may have nothing new: a
    // claimer met the end of the stream or an error (readForOwner() then
    // reports it), or gave the reader back with a frame's header already
    // read. Cleared by closeDescriptor().
    void setOwnerCall(std::function<void()> call);
    void setPayloadPlacement(PayloadPlacement placement) override;
    void setPayloadSpin(std::chrono::microseconds spin, std::function<bool()> ownerIdle) override;

    qint64 bufferedBytes() const;
    quint64 bytesReceived() const { return m_bytesReceived; }
    quint64 framesReceived() const { return m_framesReceived; }

    Claim claim(const void *claimer) override;
    void release(const void *claimer) override;
    void park(const void *claimer) override;
    int descriptor() const override { return m_fd; }
    bool readAvailable(const std::function<bool(Frame &&)> &deliver, const PayloadPlacement &place = {}) override;

    // The sweeper's thread: gives the reader back if it has been parked for
    // `parkNs` by `nowNs`. True while the sweeper should keep watching it.
    bool expireParked(qint64 nowNs, qint64 parkNs);
    static qint64 monotonicNanoseconds(); // CLOCK_MONOTONIC

private:
    // All with m_mutex held. `deliver` returns false to stop.
    Outcome readLoop(qint64 budget, const OwnerDelivery &deliver, bool owner);
    bool maySpin(bool owner) const;
    // One recv(): bytes read, 0 to try again, -1 to stop (see m_result).
    qsizetype receive(char *into, qsizetype wanted, qint64 &budget);
    bool readOnce(qint64 &budget, const OwnerDelivery &deliver);
    bool readIntoPayload(qint64 &budget, const OwnerDelivery &deliver);
    bool readIntoStaging(qint64 &budget, const OwnerDelivery &deliver);
    bool decodeStaged(const OwnerDelivery &deliver);
    bool deliverPlaced(const FrameHeader &header, const OwnerDelivery &deliver);
    bool deliverFrame(const FrameHeader &header, QByteArray payload, const OwnerDelivery &deliver);
    void beginPayload(const FrameHeader &header, const char *bytes, qsizetype available);
    // Where this frame's payload goes, or nullptr for a buffer of its own:
    // the owner's placement for fragments, and for Data frames the reading
    // thread's (the claimer's, or the owner's).
    char *placeFor(const FrameHeader &header) const;
    bool holding() const { return m_stopped || m_paused; }
    // More of the frame being read, or of its fragmented message, is due.
    bool moreDue() const { return !m_spinGaveUp && (m_header || m_fragmentsDue); }
    void noteDelivered(const FrameHeader &header);
    bool stagedFrameLocked() const { return !m_header && m_end - m_begin >= FrameHeaderSize; }
    void watch(bool enabled);
    void giveBack();

    mutable QRecursiveMutex m_mutex;
    int m_fd;
    int m_epoll = -1;
    DecoderLimits m_limits;
    std::atomic<bool> m_paused = false;
    std::atomic<bool> m_stopped = false;
    bool m_claimed = false;
    bool m_parked = false; // claimed, but nobody polls it
    qint64 m_parkedAtNs = 0; // when last parked (monotonicNanoseconds)
    bool m_swept = false;    // the ParkSweeper watches it
    const void *m_claimer = nullptr;
    bool m_closeOnRelease = false;
    // Set by the read that stopped: the end, or the error, not yet reported.
    std::optional<Outcome> m_trouble;
    Outcome m_result;
    std::function<void()> m_ownerCall;

    // Received bytes not yet decoded: [m_begin, m_end) of m_staging.
    QByteArray m_staging;
    qsizetype m_begin = 0;
    qsizetype m_end = 0;
    // A frame whose payload is being read straight into its own buffer.
    std::optional<FrameHeader> m_header;
    QByteArray m_payload;
    // Or, placed (setPayloadPlacement), where its payload goes instead.
    char *m_target = nullptr;
    qsizetype m_filled = 0;
    PayloadPlacement m_placement;
    const PayloadPlacement *m_claimerPlacement = nullptr; // during readAvailable()
    // The last frame had a large payload or began a fragmented message: the
    // next one, likely a chunk of a big message, is read header first, so
    // that its payload goes straight into its own buffer instead of through
    // m_staging.
    bool m_expectLarge = false;
    // The last frame was a fragment and not its message's last.
    bool m_fragmentsDue = false;
    // A spin found nothing: none until the next frame has arrived (a slow
    // link would otherwise cost a spin per piece of every frame).
    bool m_spinGaveUp = false;
    qint64 m_spinNs = 0;
    std::function<bool()> m_ownerIdle;
    std::atomic<quint64> m_bytesReceived = 0;
    std::atomic<quint64> m_framesReceived = 0;
};

} // namespace mmpi::detail
