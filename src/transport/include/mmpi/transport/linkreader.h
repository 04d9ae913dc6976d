// mmpi::LinkReader: lets a thread other than the link's read the link's frames
// itself for a while: a thread blocked on a message reads it straight from the
// socket instead of sleeping until the progress thread hands it over (one
// thread wake-up per message instead of two). Thread-safe; shared, so that
// the descriptor a claimer polls stays open until it lets go.
#pragma once

#include <mmpi/wire/frame.h>

#include <chrono>
#include <functional>

namespace mmpi {

class LinkReader
{
public:
    // Where a Fragment frame's payload, or a Data frame's of at least
    // MinPlacedPayload bytes, should go (`header` decoded, its payload not
    // yet delivered), or nullptr for a buffer of the frame's own. A payload
    // may be read there in pieces; if the link breaks meanwhile, nothing is
    // delivered, and a resumed link brings the frame again (same sequence).
    // Called on the reading thread with the reader locked. A frame read to
    // such a place is delivered with an empty payload (header.payloadLength
    // says how many bytes went there).
    using PayloadPlacement = std::function<char *(const FrameHeader &header)>;

    enum class Claim {
        Refused,  // closed, paused, or another thread reads it
        Claimed,  // poll descriptor() for input, then readAvailable()
        Buffered, // claimed, and whole frames already wait: readAvailable() now
    };

    virtual ~LinkReader();

    // Take reading over from the link's thread, which stops watching the
    // link until release(). `claimer` names the claiming thread (any unique
    // address); a reader parked by another claimer is taken over.
    virtual Claim claim(const void *claimer) = 0;
    // Give reading back to the link's thread now.
    virtual void release(const void *claimer) = 0;
    // Give it back lazily: the claimer expects to claim it again soon (a
    // thread between two receives), which then costs nothing. If it does
    // not within a couple of milliseconds the link's thread takes it back,
    // so frames never wait long unread. Either way, a parked reader is no
    // longer the claimer's to read until it claims it again.
    virtual void park(const void *claimer) = 0;
    // The socket to poll for input while claimed.
    virtual int descriptor() const = 0;
    // Read what has arrived, without blocking, and hand each whole frame to
    // `deliver` in order; `deliver` returns false to stop after that frame.
    // False when the claimer should stop polling and release: `deliver`
    // said so, or the link was paused or stopped, or reached its end or an
    // error, which the link reports on its own thread as usual.
    // `place`, if set, is asked for a place for the payload of each Data
    // frame of at least MinPlacedPayload bytes (a posted receive's buffer);
    // a frame whose payload went there is delivered with PlacedPayload set
    // and an empty payload. It is asked for every Fragment frame's too, as
    // setPayloadPlacement()'s is: a fragment read to a place comes with an
    // empty payload.
    virtual bool readAvailable(const std::function<bool(Frame &&)> &deliver, const PayloadPlacement &place = {}) = 0;
    // Below this a payload is copied out of the read buffer anyway, and a
    // place saves nothing worth asking for.
    static constexpr qsizetype MinPlacedPayload = 1024;
    // Lets the link's owner put large fragments straight where they belong
    // (the message being reassembled), and whole messages into the receives
    // that take them, saving a copy. Default: ignored.
    virtual void setPayloadPlacement(PayloadPlacement placement);
    // While more of a frame (or of a fragmented message) is due, keep
    // reading for up to `spin` after the last bytes came instead of waiting
    // for readiness: on fast links a large payload arrives in pieces
    // microseconds apart, and sleeping between them costs a wake-up each.
    // 0 (the default) never spins. The link's own thread serves other work
    // too, so it spins only while `ownerIdle` (asked on that thread) says it
    // has none; a thread that claimed the reader always may. Default: ignored.
    virtual void setPayloadSpin(std::chrono::microseconds spin, std::function<bool()> ownerIdle);
};

} // namespace mmpi
