// KeySchedule: what a sealed link's handshake derives
// (docs/design/protocol.md, "Key schedule"). From the X25519 shared secret,
// the world key and the transcript (both nonces, both public keys, the
// connector's claim) HKDF-SHA256 derives two proof keys and one record key
// per direction. The proofs are MACs under the proof keys: checking one
// needs the shared secret, so a captured handshake does not let anyone test
// guesses of the world key offline.
#pragma once

#include "controlmessage.h"

#include <mmpi/core/result.h>

#include <QByteArray>
#include <QString>

namespace mmpi::detail {

// Everything both ends know once the connector's Response is in.
struct LinkTranscript
{
    QString worldName;
    QString acceptorNodeId;
    QByteArray acceptorNonce;
    QByteArray connectorNonce;
    QByteArray acceptorPublicKey;
    QByteArray connectorPublicKey;
    LinkPurpose purpose = LinkPurpose::Join;
    QString connectorNodeId;
    qint32 connectorRank = NoRank;
    QString connectorListenAddress;

    // The bytes that are hashed (a QDataStream record, Qt 6.4 format).
    QByteArray encode() const;
};

struct LinkSecrets
{
    QByteArray transcriptHash; // SHA-256 of LinkTranscript::encode()
    QByteArray connectorProofKey;
    QByteArray acceptorProofKey;
    QByteArray connectorToAcceptorKey;
    QByteArray acceptorToConnectorKey;
};

class KeySchedule
{
public:
    static constexpr int KeySize = 32;

    static Result<LinkSecrets> derive(const QByteArray &sharedSecret, const QByteArray &worldKey,
                                      const LinkTranscript &transcript);
    // The connector's proof (its claim is in the transcript).
    static QByteArray connectorProof(const LinkSecrets &secrets);
    // The acceptor's proof, over the transcript and what it says of itself.
    static QByteArray acceptorProof(const LinkSecrets &secrets, qint32 rank, const QString &listenAddress);
    // Six digits ("482 913") that both ends show a person, who checks that
    // they match: a man in the middle runs two handshakes with two
    // transcripts, so the two devices show different digits.
    static QString verificationCode(const LinkSecrets &secrets);
    // HKDF-SHA256 (RFC 5869) through OpenSSL: exposed for known-answer tests.
    static Result<QByteArray> hkdf(const QByteArray &salt, const QByteArray &inputKey, const QByteArray &info,
                                   int length);
};

} // namespace mmpi::detail
