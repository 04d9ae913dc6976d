#include "keyexchange.h"

#include <openssl/evp.h>

namespace mmpi::detail {

namespace {

Error cryptoFailure(const char *step)
{
    return {ErrorCode::CryptoFailed, QStringLiteral("X25519: %1 failed").arg(QLatin1StringView(step))};
}

struct ContextDeleter
{
    void operator()(EVP_PKEY_CTX *context) const { EVP_PKEY_CTX_free(context); }
};
using Context = std::unique_ptr<EVP_PKEY_CTX, ContextDeleter>;

} // namespace

void KeyExchange::KeyDeleter::operator()(EVP_PKEY *key) const
{
    EVP_PKEY_free(key);
}

Result<KeyExchange> KeyExchange::generate()
{
    Context context(EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, nullptr));
    EVP_PKEY *key = nullptr;
    if (!context || EVP_PKEY_keygen_init(context.get()) != 1 || EVP_PKEY_keygen(context.get(), &key) != 1)
        return cryptoFailure("generating a key pair");
    return KeyExchange(key);
}

Result<KeyExchange> KeyExchange::fromPrivateKey(QByteArrayView privateKey)
{
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr,
                                                 reinterpret_cast<const unsigned char *>(privateKey.data()),
                                                 size_t(privateKey.size()));
    if (!key)
        return cryptoFailure("reading a private key");
    return KeyExchange(key);
}

QByteArray KeyExchange::publicKey() const
{
    QByteArray out(PublicKeySize, Qt::Uninitialized);
    size_t size = size_t(out.size());
    if (EVP_PKEY_get_raw_public_key(m_key.get(), reinterpret_cast<unsigned char *>(out.data()), &size) != 1
        || size != size_t(PublicKeySize))
        return {};
    return out;
}

Result<QByteArray> KeyExchange::agree(QByteArrayView peerPublicKey) const
{
    if (peerPublicKey.size() != PublicKeySize)
        return Error(ErrorCode::ProtocolViolation, QStringLiteral("an X25519 public key has %1 bytes, got %2")
                                                       .arg(PublicKeySize).arg(peerPublicKey.size()));
    std::unique_ptr<EVP_PKEY, KeyDeleter> peer(EVP_PKEY_new_raw_public_key(
        EVP_PKEY_X25519, nullptr, reinterpret_cast<const unsigned char *>(peerPublicKey.data()),
        size_t(peerPublicKey.size())));
    Context context(EVP_PKEY_CTX_new(m_key.get(), nullptr));
    if (!peer || !context || EVP_PKEY_derive_init(context.get()) != 1)
        return cryptoFailure("starting the exchange");
    QByteArray secret(SharedSecretSize, Qt::Uninitialized);
    size_t size = size_t(secret.size());
    // OpenSSL refuses a peer key whose secret would be all zeros (a
    // low-order point): a peer could otherwise fix the secret.
    if (EVP_PKEY_derive_set_peer(context.get(), peer.get()) != 1
        || EVP_PKEY_derive(context.get(), reinterpret_cast<unsigned char *>(secret.data()), &size) != 1
        || size != size_t(SharedSecretSize))
        return Error(ErrorCode::ProtocolViolation, QStringLiteral("the peer's X25519 public key yields no shared secret"));
    return secret;
}

} // namespace mmpi::detail
