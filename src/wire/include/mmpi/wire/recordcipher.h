// RecordCipher: one direction of a sealed link's record layer
// (docs/design/protocol.md, "Sealed records"). seal() turns a frame, header
// and payload, into the payload of a Sealed frame with AES-256-GCM; open()
// turns such a record back into its frame. Records are numbered from 1 in
// each direction; the number is the GCM nonce's tail and the outer header
// (which carries it) is authenticated data, so a record that is altered,
// replayed, reordered or follows a dropped one fails to open. After a failed
// open() the cipher stays failed: the link cannot be resynchronised. A key
// must never be used for more than one cipher of one direction (a nonce
// would repeat): the key schedule derives fresh keys for every link.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>
#include <mmpi/wire/framedecoder.h>

#include <QByteArrayView>

#include <memory>

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX; // OpenSSL's, as <openssl/types.h> names it

namespace mmpi {

class RecordCipher
{
public:
    static constexpr int KeySize = 32;   // AES-256
    static constexpr int NonceSize = 12; // GCM's 96-bit IV
    static constexpr int TagSize = 16;
    // Bytes a sealed frame has beyond the frame it seals: the outer header and the tag.
    static constexpr int Overhead = FrameHeaderSize + TagSize;

    // Which way records go; the first four bytes of every nonce, so that the
    // two directions' nonces differ even if their keys did not.
    enum class Direction : quint32 { ConnectorToAcceptor = 1, AcceptorToConnector = 2 };

    // `limits` bound the frames open() accepts inside records.
    static Result<RecordCipher> create(QByteArrayView key, Direction direction, DecoderLimits limits = {});
    RecordCipher(RecordCipher &&other) noexcept;
    RecordCipher &operator=(RecordCipher &&other) noexcept;
    ~RecordCipher();

    // The Sealed frame that carries `frame` as the next record. Its payload
    // comes from BufferPool: recycle it once it is written.
    Result<Frame> seal(const Frame &frame);
    // The frame the next record carries; RecordRefused if `record` is not it.
    // Its payload comes from BufferPool, as seal()'s does.
    Result<Frame> open(const Frame &record);

    // The number the next record sealed or opened gets.
    quint64 nextSequence() const { return m_next; }
    // The nonce of record `sequence` in `direction`: direction (u32) then sequence (u64), big-endian.
    static QByteArray nonceFor(Direction direction, quint64 sequence);
    // The outer header of a record of `sealedLength` payload bytes (the authenticated data).
    static FrameHeader recordHeader(quint64 sequence, quint32 sealedLength);

private:
    RecordCipher(EVP_CIPHER_CTX *context, Direction direction, DecoderLimits limits);
    Result<void> start(bool encrypt, quint64 sequence, const char *outerHeader);
    Result<void> checkRecord(const Frame &record) const;
    Result<Frame> decrypt(const Frame &record);
    Error refuse(const QString &why);

    struct ContextDeleter
    {
        void operator()(EVP_CIPHER_CTX *context) const;
    };
    std::unique_ptr<EVP_CIPHER_CTX, ContextDeleter> m_context;
    Direction m_direction;
    DecoderLimits m_limits;
    quint64 m_next = 1;
    bool m_failed = false;
};

} // namespace mmpi
