// KeyExchange: one side's ephemeral X25519 key pair for one handshake
// (OpenSSL 3's EVP). The private key never leaves the object and goes with
// it, which is what makes a recorded link undecryptable later (forward
// secrecy): keep it no longer than the handshake.
#pragma once

#include <mmpi/core/result.h>

#include <QByteArray>
#include <QByteArrayView>

#include <memory>

typedef struct evp_pkey_st EVP_PKEY; // OpenSSL's, as <openssl/types.h> names it

namespace mmpi::detail {

class KeyExchange
{
public:
    static constexpr int PublicKeySize = 32;
    static constexpr int SharedSecretSize = 32;

    static Result<KeyExchange> generate();
    // Made from a known private key: for known-answer tests only.
    static Result<KeyExchange> fromPrivateKey(QByteArrayView privateKey);

    QByteArray publicKey() const;
    // The shared secret with the holder of `peerPublicKey`; ProtocolViolation
    // for a key of the wrong size or one that yields no secret (a low-order point).
    Result<QByteArray> agree(QByteArrayView peerPublicKey) const;

private:
    struct KeyDeleter
    {
        void operator()(EVP_PKEY *key) const;
    };
    explicit KeyExchange(EVP_PKEY *key) : m_key(key) {}

    std::unique_ptr<EVP_PKEY, KeyDeleter> m_key;
};

} // namespace mmpi::detail
