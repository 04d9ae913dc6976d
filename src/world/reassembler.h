// Reassembler: puts the Fragment frames of one peer back together into the
// Data message they came from, in a buffer of its own or in one the receiver
// offered (a blocking receive's, so the message is not copied again). A
// sender fragments one message at a time per link, so there is at most one
// message in progress. Nothing from the peer is trusted: lengths are bounded
// by the configured maximum message size and memory grows only with bytes
// actually received.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <functional>
#include <optional>

namespace mmpi::detail {

// Where a message that starts with `header` and holds `bytes` bytes in all
// may be written as it arrives, or nullptr for a buffer of the reassembler's
// own. The place must stay valid until the message is complete or abandon()ed.
using MessagePlacement = std::function<char *(const FrameHeader &header, qint64 bytes)>;

class Reassembler
{
public:
    explicit Reassembler(qint64 maxMessageSize);

    // The whole Data message once its last fragment is in, nullopt before,
    // or a ProtocolViolation that makes the link unusable (then abandon() the
    // message). A message written to a place the placement gave comes
    // without payload, flagged PlacedPayload.
    // `placement` is asked for a place when the message begins, and before
    // each later fragment until it gives one.
    Result<std::optional<Frame>> add(const Frame &fragment, const MessagePlacement &placement = {});
    qint64 bufferedBytes() const { return m_message ? m_filled : 0; }
    // Whether the message in progress is being written to a placement's place.
    bool placing() const { return m_message && (m_message->header.flags & PlacedPayload); }
    // Forget the message in progress, and never write to its place again
    // (its receiver is told that the peer is gone).
    void abandon();

private:
    Result<void> begin(const Frame &fragment, const MessagePlacement &placement);
    Result<void> checkContinues(const FrameHeader &header) const;
    void placeLate(const MessagePlacement &placement);

    Result<std::optional<Frame>> finish();

    qint64 m_maxMessageSize;
    std::optional<Frame> m_message;
    char *m_target = nullptr; // the message's bytes: an offered place or m_message's payload
    qint64 m_expected = 0;
    qint64 m_filled = 0;
};

} // namespace mmpi::detail
