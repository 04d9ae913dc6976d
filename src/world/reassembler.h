// Reassembler: puts the Fragment frames of one peer back together into the
// Data message they came from. A sender fragments one message at a time per
// link, so there is at most one message in progress. Nothing from the peer is
// trusted: lengths are bounded by the configured maximum message size and
// memory grows only with bytes actually received.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <optional>

namespace mmpi::detail {

class Reassembler
{
public:
    explicit Reassembler(qint64 maxMessageSize);

    // The whole Data message once its last fragment is in, nullopt before,
    // or a ProtocolViolation that makes the link unusable.
    // A fragment read by placeNext() arrives with an empty payload.
    Result<std::optional<Frame>> add(const Frame &fragment);
    // Where the next fragment's payload belongs if `header` continues the
    // message in progress (so that the link reads it there: no copy), else
    // nullptr. The bytes count once add() has that fragment.
    char *placeNext(const FrameHeader &header);
    qint64 bufferedBytes() const { return m_message ? m_message->payload.size() : 0; }

private:
    Result<void> begin(const Frame &fragment);
    Result<void> checkContinues(const FrameHeader &header) const;

    qint64 m_maxMessageSize;
    std::optional<Frame> m_message;
    qint64 m_expected = 0;
    qsizetype m_placed = -1; // where placeNext() last put a fragment
};

} // namespace mmpi::detail
