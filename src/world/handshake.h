// Handshake: the world-key challenge-response on one fresh link, before the
// link may carry anything else. Each side proves it holds the key with an
// HMAC over both nonces and the identity it claims; the key never travels.
// A connector whose proof does not match the acceptor's key is told so with a
// KeyMismatch, and both ends fail the link with WorldKeyMismatch: a wrong key
// on either side reads as what it is wherever it is reported. One object per
// link; it deletes itself when done.
#pragma once

#include "controlmessage.h"

#include <mmpi/transport/link.h>

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <functional>

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
    void sendChallenge();
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
    PeerIdentity m_peer;
    QTimer m_timer;
    bool m_done = false;
};

// HMAC-SHA256 over a role label, the world name, both nonces and a claim.
QByteArray keyProof(const QByteArray &key, const QByteArray &role, const QString &worldName,
                    const QByteArray &acceptorNonce, const QByteArray &connectorNonce,
                    const PeerIdentity &claim);

} // namespace mmpi::detail

Q_DECLARE_METATYPE(mmpi::detail::PeerIdentity)
