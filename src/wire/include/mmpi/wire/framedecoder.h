// Incremental frame decoder for one link: bytes go in as they arrive, whole
// validated frames come out. A transport reads straight into space(), so a
// payload lands where its frame will carry it; feed()/next() do the same for
// bytes already in memory. It never trusts a length: the header is checked as
// soon as its 44 bytes are in, and memory grows with the bytes received. After
// an error the decoder stays failed: the link cannot be resynchronised.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <array>
#include <optional>
#include <span>

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

    // Where the next bytes of the stream belong: the rest of the header, then
    // the rest of the payload (empty once failed). A transport reads at most
    // this many bytes into it and then calls commit().
    std::span<char> space();
    // Takes the first `bytes` of space(): the frame they complete, nullopt if
    // more are needed, or the error, as next().
    Result<std::optional<Frame>> commit(qint64 bytes);

    // How many more bytes feed() accepts now.
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
    Result<std::optional<Frame>> takeHeader();
    Result<std::optional<Frame>> finishFrame();
    void growPayload();

    DecoderLimits m_limits;
    // feed()'s bytes that next() has not taken yet.
    QByteArray m_input;
    qsizetype m_inputPos = 0;
    std::array<char, FrameHeaderSize> m_header{};
    qsizetype m_headerFilled = 0;
    // Set once the header is in and checked; then the payload fills.
    std::optional<FrameHeader> m_pendingHeader;
    QByteArray m_payload;
    qsizetype m_payloadFilled = 0;
    Error m_failure;
};

} // namespace mmpi
