#include "keyschedule.h"

#include <QtEndian>

#include <QCryptographicHash>
#include <QDataStream>
#include <QIODevice>
#include <QMessageAuthenticationCode>

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <memory>

namespace mmpi::detail {

namespace {

const QByteArray TranscriptLabel = QByteArrayLiteral("MMPI/2 sealed link");
const QByteArray KeysLabel = QByteArrayLiteral("MMPI/2 link keys");
const QByteArray ConnectorLabel = QByteArrayLiteral("MMPI/2 connector");
const QByteArray AcceptorLabel = QByteArrayLiteral("MMPI/2 acceptor");
const QByteArray VerificationLabel = QByteArrayLiteral("MMPI/2 verification code");
// Six decimal digits, about 20 bits: what KDE Connect and Bluetooth's
// numeric comparison ask a person to compare.
constexpr quint32 VerificationModulus = 1000000;

struct KdfDeleter
{
    void operator()(EVP_KDF *kdf) const { EVP_KDF_free(kdf); }
    void operator()(EVP_KDF_CTX *context) const { EVP_KDF_CTX_free(context); }
};

OSSL_PARAM octets(const char *name, const QByteArray &bytes)
{
    // OSSL_PARAM takes void *; OpenSSL only reads these.
    return OSSL_PARAM_construct_octet_string(name, const_cast<char *>(bytes.constData()), size_t(bytes.size()));
}

} // namespace

QByteArray LinkTranscript::encode() const
{
    QByteArray bytes;
    QDataStream stream(&bytes, QIODevice::WriteOnly);
    stream.setVersion(QDataStream::Qt_6_4);
    stream << TranscriptLabel << worldName << acceptorNodeId << acceptorNonce << connectorNonce
           << acceptorPublicKey << connectorPublicKey << quint8(purpose) << connectorNodeId << connectorRank
           << connectorListenAddress;
    return bytes;
}

Result<QByteArray> KeySchedule::hkdf(const QByteArray &salt, const QByteArray &inputKey, const QByteArray &info,
                                     int length)
{
    std::unique_ptr<EVP_KDF, KdfDeleter> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
    std::unique_ptr<EVP_KDF_CTX, KdfDeleter> context(kdf ? EVP_KDF_CTX_new(kdf.get()) : nullptr);
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        octets(OSSL_KDF_PARAM_KEY, inputKey),
        octets(OSSL_KDF_PARAM_SALT, salt),
        octets(OSSL_KDF_PARAM_INFO, info),
        OSSL_PARAM_construct_end(),
    };
    QByteArray out(length, Qt::Uninitialized);
    if (!context || EVP_KDF_derive(context.get(), reinterpret_cast<unsigned char *>(out.data()), size_t(length), params) != 1)
        return Error(ErrorCode::CryptoFailed, QStringLiteral("HKDF-SHA256 failed"));
    return out;
}

// IKM: the shared secret and the world key, so that neither alone gives the
// keys; salt: both nonces, fresh for every link; info: the transcript, so
// that both ends derive the same keys only if they saw the same handshake.
Result<LinkSecrets> KeySchedule::derive(const QByteArray &sharedSecret, const QByteArray &worldKey,
                                        const LinkTranscript &transcript)
{
    LinkSecrets secrets;
    secrets.transcriptHash = QCryptographicHash::hash(transcript.encode(), QCryptographicHash::Sha256);
    auto okm = hkdf(transcript.acceptorNonce + transcript.connectorNonce, sharedSecret + worldKey,
                    KeysLabel + secrets.transcriptHash, 4 * KeySize);
    if (!okm)
        return okm.error();
    secrets.connectorProofKey = okm->sliced(0, KeySize);
    secrets.acceptorProofKey = okm->sliced(KeySize, KeySize);
    secrets.connectorToAcceptorKey = okm->sliced(2 * KeySize, KeySize);
    secrets.acceptorToConnectorKey = okm->sliced(3 * KeySize, KeySize);
    return secrets;
}

QString KeySchedule::verificationCode(const LinkSecrets &secrets)
{
    const QByteArray digest = QMessageAuthenticationCode::hash(VerificationLabel, secrets.transcriptHash,
                                                               QCryptographicHash::Sha256);
    const quint32 value = qFromBigEndian<quint32>(digest.constData()) % VerificationModulus;
    return QStringLiteral("%1 %2").arg(value / 1000, 3, 10, QLatin1Char('0')).arg(value % 1000, 3, 10, QLatin1Char('0'));
}

QByteArray KeySchedule::connectorProof(const LinkSecrets &secrets)
{
    return QMessageAuthenticationCode::hash(ConnectorLabel + secrets.transcriptHash, secrets.connectorProofKey,
                                            QCryptographicHash::Sha256);
}

QByteArray KeySchedule::acceptorProof(const LinkSecrets &secrets, qint32 rank, const QString &listenAddress)
{
    QByteArray claim;
    QDataStream stream(&claim, QIODevice::WriteOnly);
    stream.setVersion(QDataStream::Qt_6_4);
    stream << AcceptorLabel << secrets.transcriptHash << rank << listenAddress;
    return QMessageAuthenticationCode::hash(claim, secrets.acceptorProofKey, QCryptographicHash::Sha256);
}

} // namespace mmpi::detail
