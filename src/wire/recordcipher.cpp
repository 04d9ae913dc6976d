#include <mmpi/wire/recordcipher.h>

#include <mmpi/wire/bufferpool.h>

#include <QtEndian>

#include <openssl/evp.h>

#include <cstring>
#include <limits>

namespace mmpi {

namespace {

// EVP takes int lengths; a frame's payload may be longer than that.
constexpr qsizetype MaxUpdate = 1 << 30;

Error cryptoFailure(const char *step)
{
    return {ErrorCode::CryptoFailed, QStringLiteral("AES-256-GCM: %1 failed").arg(QLatin1StringView(step))};
}

bool update(EVP_CIPHER_CTX *context, char *out, const char *in, qsizetype size)
{
    while (size > 0) {
        const int chunk = int(qMin(size, MaxUpdate));
        int written = 0;
        if (EVP_CipherUpdate(context, reinterpret_cast<unsigned char *>(out), &written,
                             reinterpret_cast<const unsigned char *>(in), chunk) != 1
            || written != chunk)
            return false;
        out += chunk;
        in += chunk;
        size -= chunk;
    }
    return true;
}

} // namespace

void RecordCipher::ContextDeleter::operator()(EVP_CIPHER_CTX *context) const
{
    EVP_CIPHER_CTX_free(context);
}

Result<RecordCipher> RecordCipher::create(QByteArrayView key, Direction direction, DecoderLimits limits)
{
    if (key.size() != KeySize)
        return Error(ErrorCode::CryptoFailed,
                     QStringLiteral("a record key has %1 bytes, got %2").arg(KeySize).arg(key.size()));
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (!context)
        return cryptoFailure("allocating a context");
    RecordCipher cipher(context, direction, limits);
    // The key schedule once per link; each record then sets only its nonce.
    if (EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nullptr,
                          reinterpret_cast<const unsigned char *>(key.data()), nullptr, 1) != 1)
        return cryptoFailure("setting the key");
    return cipher;
}

RecordCipher::RecordCipher(EVP_CIPHER_CTX *context, Direction direction, DecoderLimits limits)
    : m_context(context), m_direction(direction), m_limits(limits)
{
}

RecordCipher::RecordCipher(RecordCipher &&other) noexcept = default;
RecordCipher &RecordCipher::operator=(RecordCipher &&other) noexcept = default;
RecordCipher::~RecordCipher() = default;

QByteArray RecordCipher::nonceFor(Direction direction, quint64 sequence)
{
    QByteArray nonce(NonceSize, Qt::Uninitialized);
    qToBigEndian<quint32>(quint32(direction), nonce.data());
    qToBigEndian<quint64>(sequence, nonce.data() + 4);
    return nonce;
}

FrameHeader RecordCipher::recordHeader(quint64 sequence, quint32 sealedLength)
{
    FrameHeader header;
    header.kind = FrameKind::Sealed;
    header.itemType = ItemType::Byte;
    header.count = sealedLength;
    header.sequence = sequence;
    header.payloadLength = sealedLength;
    return header;
}

// Nonce and authenticated data of one record; the key stays from create().
Result<void> RecordCipher::start(bool encrypt, quint64 sequence, const char *outerHeader)
{
    unsigned char nonce[NonceSize]; // nonceFor()'s bytes, without an allocation per record
    qToBigEndian<quint32>(quint32(m_direction), nonce);
    qToBigEndian<quint64>(sequence, nonce + 4);
    int ignored = 0;
    if (EVP_CipherInit_ex(m_context.get(), nullptr, nullptr, nullptr, nonce, encrypt ? 1 : 0) != 1
        || EVP_CipherUpdate(m_context.get(), nullptr, &ignored,
                            reinterpret_cast<const unsigned char *>(outerHeader), FrameHeaderSize) != 1)
        return cryptoFailure("starting a record");
    return success();
}

Result<Frame> RecordCipher::seal(const Frame &frame)
{
    const qint64 sealedLength = qint64(FrameHeaderSize) + frame.payload.size() + TagSize;
    if (sealedLength > qint64(std::numeric_limits<quint32>::max()))
        return Error(ErrorCode::FrameTooLarge, QStringLiteral("a frame of %1 bytes is too large to seal")
                                                   .arg(frame.payload.size()));
    // 2^64 records would repeat a nonce; no link lives that long, but none may.
    if (m_next == 0)
        return Error(ErrorCode::CryptoFailed, QStringLiteral("the link has sealed all the records it may"));
    Frame record;
    record.header = recordHeader(m_next, quint32(sealedLength));
    char outer[FrameHeaderSize];
    encodeHeaderInto(record.header, outer);
    if (auto started = start(true, m_next, outer); !started)
        return started.error();

    FrameHeader inner = frame.header;
    inner.payloadLength = quint32(frame.payload.size());
    char head[FrameHeaderSize];
    encodeHeaderInto(inner, head);
    // Encrypted straight into the record: the frame's bytes are read once,
    // into a buffer that has been written before (BufferPool: no page faults).
    record.payload = BufferPool::take(sealedLength);
    char *out = record.payload.data();
    unsigned char none[TagSize]; // GCM's final step writes nothing, but takes a place
    int last = 0;
    if (!update(m_context.get(), out, head, FrameHeaderSize)
        || !update(m_context.get(), out + FrameHeaderSize, frame.payload.constData(), frame.payload.size())
        || EVP_CipherFinal_ex(m_context.get(), none, &last) != 1
        || EVP_CIPHER_CTX_ctrl(m_context.get(), EVP_CTRL_GCM_GET_TAG, TagSize, out + sealedLength - TagSize) != 1)
        return cryptoFailure("sealing a record");
    ++m_next;
    return record;
}

Error RecordCipher::refuse(const QString &why)
{
    m_failed = true;
    return {ErrorCode::RecordRefused, why};
}

Result<void> RecordCipher::checkRecord(const Frame &record) const
{
    const FrameHeader &h = record.header;
    if (h.kind != FrameKind::Sealed)
        return Error(ErrorCode::RecordRefused,
                     QStringLiteral("an unsealed frame (kind %1) arrived on a sealed link").arg(int(h.kind)));
    if (h.itemType != ItemType::Byte || h.flags != 0 || h.count != quint32(record.payload.size())
        || record.payload.size() < FrameHeaderSize + TagSize)
        return Error(ErrorCode::RecordRefused,
                     QStringLiteral("malformed sealed record %1 (%2 bytes)").arg(h.sequence).arg(record.payload.size()));
    if (h.sequence != m_next)
        return Error(ErrorCode::RecordRefused,
                     QStringLiteral("sealed record %1 arrived where record %2 was due: it was replayed or "
                                    "reordered, or one before it was dropped")
                         .arg(h.sequence)
                         .arg(m_next));
    return success();
}

Result<Frame> RecordCipher::open(const Frame &record)
{
    if (m_failed)
        return Error(ErrorCode::RecordRefused, QStringLiteral("an earlier record on this link was refused"));
    if (auto ok = checkRecord(record); !ok)
        return refuse(ok.error().message);
    auto frame = decrypt(record);
    if (!frame)
        m_failed = true;
    else
        ++m_next;
    return frame;
}

// Decrypts the inner header and payload, each into its own place, and
// believes neither until the tag has matched.
Result<Frame> RecordCipher::decrypt(const Frame &record)
{
    FrameHeader outerHeader = record.header;
    outerHeader.payloadLength = quint32(record.payload.size());
    char outer[FrameHeaderSize];
    encodeHeaderInto(outerHeader, outer);
    if (auto started = start(false, m_next, outer); !started)
        return started.error();
    const char *in = record.payload.constData();
    const qsizetype payloadSize = record.payload.size() - FrameHeaderSize - TagSize;
    char head[FrameHeaderSize];
    Frame frame;
    frame.payload = BufferPool::take(payloadSize);
    char tag[TagSize]; // EVP takes it through a non-const pointer
    memcpy(tag, in + FrameHeaderSize + payloadSize, TagSize);
    unsigned char none[TagSize];
    int last = 0;
    if (!update(m_context.get(), head, in, FrameHeaderSize)
        || !update(m_context.get(), frame.payload.data(), in + FrameHeaderSize, payloadSize)
        || EVP_CIPHER_CTX_ctrl(m_context.get(), EVP_CTRL_GCM_SET_TAG, TagSize, tag) != 1)
        return cryptoFailure("opening a record");
    if (EVP_CipherFinal_ex(m_context.get(), none, &last) != 1)
        return refuse(QStringLiteral("sealed record %1 failed authentication: it was altered on the way, or "
                                     "sealed with another key")
                          .arg(record.header.sequence));
    auto header = FrameDecoder::decodeHeader(QByteArrayView(head, FrameHeaderSize), m_limits);
    if (!header)
        return header.error();
    if (header->kind == FrameKind::Sealed || header->payloadLength != quint32(payloadSize))
        return Error(ErrorCode::BadHeader, QStringLiteral("sealed record %1 holds a malformed frame")
                                               .arg(record.header.sequence));
    if (auto ok = FrameDecoder::checkPayload(*header, frame.payload); !ok)
        return ok.error();
    frame.header = *header;
    return frame;
}

} // namespace mmpi
