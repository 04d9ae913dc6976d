// Handshake: the sealed handshake on one fresh link, before the link may
// carry anything else (docs/design/protocol.md, "Handshake"). Both sides
// send an ephemeral X25519 public key with their nonce; each proves it holds
// the world key with a MAC under a key derived from the X25519 secret, the
// world key and the transcript (KeySchedule), so the proofs cannot be
// checked, nor the key guessed, without the secret. On success the link
// comes out wrapped in a SealedLink with the derived record keys: every
// frame after the Accept is sealed. A connector whose proof does not match
// the acceptor's key is told so with a KeyMismatch, and both ends fail the
// link with WorldKeyMismatch. A peer that speaks the older unsealed
// handshake is refused with SealingUnsupported. One object per link; it
// deletes itself when done.
#pragma once

#include "controlmessage.h"
#include "keyexchange.h"
#include "keyschedule.h"

#include <mmpi/transport/link.h>

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <functional>
#include <optional>

namespace mmpi::detail {

struct LocalIdentity
{
    QString worldName;
    QByteArray key;
    QString nodeId;
    qint32 rank = NoRank;
    QString listenAddress;
};

struct PeerIdentity
{
    LinkPurpose purpose = LinkPurpose::Join;
    QString nodeId;
    qint32 rank = NoRank;
    QString listenAddress;
};

class Handshake : public QObject
{
    Q_OBJECT
public:
    // Decides, once the peer has proven the key, whether its claim is welcome.
    using AdmitFunction = std::function<Result<void>(const PeerIdentity &)>;

    // The accepting side: sends the challenge at once.
    static Handshake *accept(Link *link, const LocalIdentity &self, AdmitFunction admit,
                             std::chrono::milliseconds timeout, QObject *parent);
    // The connecting side: waits for the link to connect and the challenge.
    static Handshake *connect(Link *link, const LocalIdentity &self, LinkPurpose purpose,
                              std::chrono::milliseconds timeout, QObject *parent);

    Link *link() const { return m_link; }

Q_SIGNALS:
    // `link` is a new SealedLink that owns the handshake's link.
    void succeeded(mmpi::Link *link, const mmpi::detail::PeerIdentity &peer);
    // The link has been closed (after a Refuse where that helps the peer).
    void failed(mmpi::Link *link, const mmpi::Error &error);

private:
    Handshake(Link *link, const LocalIdentity &self, std::chrono::milliseconds timeout, QObject *parent);
    void handleFrame(const Frame &frame);
    void handleLinkClosed();
    void handleChallenge(const Frame &frame);
    void handleResponse(const Frame &frame);
    void handleAccept(const Frame &frame);
    void handleKeyMismatch(const Frame &frame);
    void handleRefuse(const Frame &frame);
    void refuseUnsealed();
    void sendChallenge();
    // Derives the link's secrets once both public keys and nonces are known.
    Result<void> deriveSecrets(const QByteArray &peerPublicKey, const PeerIdentity &connectorClaim);
    void refuse(const Error &error);
    // Tells the connector its proof does not match this node's key, then fails with `error`.
    void refuseKeyMismatch(const Error &error);
    void fail(const Error &error);
    void succeed(const PeerIdentity &peer);
    void finish();

    QPointer<Link> m_link;
    LocalIdentity m_self;
    bool m_accepting = false;
    LinkPurpose m_purpose = LinkPurpose::Join;
    AdmitFunction m_admit;
    QByteArray m_acceptorNonce;
    QByteArray m_connectorNonce;
    std::optional<KeyExchange> m_exchange; // dropped once the secrets are derived (forward secrecy)
    std::optional<LinkSecrets> m_secrets;
    PeerIdentity m_peer;
    QTimer m_timer;
    bool m_done = false;
};

} // namespace mmpi::detail

Q_DECLARE_METATYPE(mmpi::detail::PeerIdentity)
