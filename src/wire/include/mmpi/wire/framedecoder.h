// Incremental frame decoder for one link: bytes go in as they arrive, whole
// validated frames come out. It never trusts a length: the header is checked as
// soon as its 44 bytes are in, and memory grows only with bytes actually
// received, bounded by the configured limits. After an error the decoder stays
// failed: a link that sent garbage cannot be resynchronised and must be closed.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <optional>

namespace mmpi {

struct DecoderLimits
{
    // Largest accepted frame, header included.
    qint64 maxFrameSize = 256LL * 1024 * 1024;
    // Most bytes buffered before they form a frame (a partial frame plus what
    // follows it). Must be at least maxFrameSize; feed() beyond it is an error.
    qint64 maxBufferedBytes = 256LL * 1024 * 1024 + 64 * 1024;
};

class FrameDecoder
{
public:
    explicit FrameDecoder(DecoderLimits limits = {});

    // Append received bytes. Error (BufferLimitExceeded) if the buffer would
    // exceed limits.maxBufferedBytes, or the decoder has already failed.
    Result<void> feed(QByteArrayView bytes);

    // The next complete frame, nullopt if more bytes are needed, or the error
    // that makes the stream unusable (BadMagic, BadVersion, BadFrameKind,
    // BadItemType, BadHeader, FrameTooLarge, CountMismatch).
    Result<std::optional<Frame>> next();

    // How many more bytes feed() accepts now; a transport reads at most this.
    qint64 capacity() const;
    qint64 bufferedBytes() const;
    bool hasFailed() const;
    const Error &failure() const;
    const DecoderLimits &limits() const;

    // Validate a header on its own (used by next(); exposed for tests and for
    // transports that read payloads straight into their own buffers).
    static Result<FrameHeader> decodeHeader(QByteArrayView bytes, const DecoderLimits &limits);
    // The first bytes of a header that has not fully arrived: a stream that
    // starts with a wrong magic or version is refused at once.
    static Result<void> checkHeaderPrefix(QByteArrayView bytes);
    // What only the payload bytes can tell (Object records, Boolean values).
    static Result<void> checkPayload(const FrameHeader &header, const QByteArray &payload);

private:
    DecoderLimits m_limits;
    QByteArray m_buffer;
    qsizetype m_readPos = 0;
    std::optional<FrameHeader> m_pendingHeader;
    Error m_failure;
};

} // namespace mmpi
