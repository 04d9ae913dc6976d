// Strict incremental decoder for one edu.rit.mp byte stream: bytes go in in any
// split, whole messages come out. The header is checked as soon as each field
// is in (a wrong magic fails on its fourth byte); N is bounded by a maximum
// message size before anything is allocated, and memory grows only with bytes
// that actually arrived. After an error the decoder stays failed: the stream
// has no length field, so it cannot be resynchronised.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/message.h>

#include <QList>

#include <optional>

namespace mmpi::mp {

class Decoder
{
public:
    // Largest accepted item payload (N × item size, or N for objects).
    explicit Decoder(qint64 maxMessageSize = 64LL * 1024 * 1024);

    // Consume received bytes; completed messages queue up for next(). Errors:
    // BadMagic, BadItemType (not 1..13), BadHeader (negative N), FrameTooLarge
    // (payload over the limit), or the earlier error if already failed.
    Result<void> feed(QByteArrayView bytes);
    // The oldest completed message, nullopt if none.
    std::optional<Message> next();
    int readyCount() const { return int(m_ready.size()); }

    // The stream has ended: TruncatedPayload if it stopped inside a message,
    // saying how far it got.
    Result<void> finish() const;
    // True when no message has been started (the stream may end here).
    bool atBoundary() const { return m_header.isEmpty() && !m_inPayload; }

    bool hasFailed() const { return m_failure.isError(); }
    const Error &failure() const { return m_failure; }
    qint64 maxMessageSize() const { return m_maxMessageSize; }

private:
    qsizetype takeHeader(QByteArrayView bytes);
    Result<void> checkHeaderSoFar();
    qsizetype takePayload(QByteArrayView bytes);
    Result<void> fail(Error error);

    qint64 m_maxMessageSize;
    QByteArray m_header;
    bool m_inPayload = false;
    Message m_current;
    qint64 m_payloadLength = 0;
    QList<Message> m_ready;
    Error m_failure;
};

} // namespace mmpi::mp
