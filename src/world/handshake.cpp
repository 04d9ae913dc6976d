#include "handshake.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/sealedlink.h>

#include <QRandomGenerator>

namespace mmpi::detail {

namespace {

QByteArray randomNonce()
{
    QByteArray nonce(NonceSize, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(nonce.data()),
                                          NonceSize / int(sizeof(quint32)));
    return nonce;
}

// Compares MACs in time independent of where they first differ.
bool equalConstantTime(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

} // namespace

Handshake::Handshake(Link *link, const LocalIdentity &self, std::chrono::milliseconds timeout,
                     QObject *parent)
    : QObject(parent), m_link(link), m_self(self)
{
    QObject::connect(link, &Link::frameReceived, this, &Handshake::handleFrame);
    QObject::connect(link, &Link::stateChanged, this, [this](Link::State state) {
        if (state == Link::State::Closed)
            handleLinkClosed();
    });
    m_timer.setSingleShot(true);
    QObject::connect(&m_timer, &QTimer::timeout, this, [this, timeout] {
        fail({ErrorCode::AuthenticationFailed,
              QStringLiteral("no key proof from %1 within %2 ms")
                  .arg(m_link ? m_link->peerAddress() : QString())
                  .arg(timeout.count())});
    });
    m_timer.start(timeout);
}

Handshake *Handshake::accept(Link *link, const LocalIdentity &self, AdmitFunction admit,
                             std::chrono::milliseconds timeout, QObject *parent)
{
    auto *handshake = new Handshake(link, self, timeout, parent);
    handshake->m_accepting = true;
    handshake->m_admit = std::move(admit);
    handshake->sendChallenge();
    return handshake;
}

Handshake *Handshake::connect(Link *link, const LocalIdentity &self, LinkPurpose purpose,
                              std::chrono::milliseconds timeout, QObject *parent)
{
    auto *handshake = new Handshake(link, self, timeout, parent);
    handshake->m_purpose = purpose;
    return handshake;
}

void Handshake::sendChallenge()
{
    auto exchange = KeyExchange::generate();
    if (!exchange) {
        // Later: accept() has not returned, so nobody listens for failed() yet.
        QMetaObject::invokeMethod(this, [this, error = exchange.error()] { fail(error); }, Qt::QueuedConnection);
        return;
    }
    m_exchange = std::move(*exchange);
    m_acceptorNonce = randomNonce();
    m_link->sendFrame(
        encodeControl(Challenge{m_self.worldName, m_self.nodeId, m_acceptorNonce, m_exchange->publicKey()}));
}

Result<void> Handshake::deriveSecrets(const QByteArray &peerPublicKey, const PeerIdentity &connectorClaim)
{
    auto shared = m_exchange->agree(peerPublicKey);
    // The private key is of no more use: gone, a recording of this link
    // cannot be opened even with the world key.
    const QByteArray ownPublicKey = m_exchange->publicKey();
    m_exchange.reset();
    if (!shared)
        return shared.error();
    LinkTranscript transcript;
    transcript.worldName = m_self.worldName;
    transcript.acceptorNodeId = m_accepting ? m_self.nodeId : m_peer.nodeId;
    transcript.acceptorNonce = m_acceptorNonce;
    transcript.connectorNonce = m_connectorNonce;
    transcript.acceptorPublicKey = m_accepting ? ownPublicKey : peerPublicKey;
    transcript.connectorPublicKey = m_accepting ? peerPublicKey : ownPublicKey;
    transcript.purpose = connectorClaim.purpose;
    transcript.connectorNodeId = connectorClaim.nodeId;
    transcript.connectorRank = connectorClaim.rank;
    transcript.connectorListenAddress = connectorClaim.listenAddress;
    auto secrets = KeySchedule::derive(*shared, m_self.key, transcript);
    if (!secrets)
        return secrets.error();
    m_secrets = std::move(*secrets);
    return success();
}

void Handshake::handleFrame(const Frame &frame)
{
    if (m_done)
        return;
    const auto type = controlType(frame);
    if (!type) {
        refuse({ErrorCode::ProtocolViolation,
                QStringLiteral("%1 sent a non-control frame before proving the world key")
                    .arg(m_link->peerAddress())});
        return;
    }
    switch (*type) {
    case ControlType::Challenge:
        if (!m_accepting && m_acceptorNonce.isEmpty())
            return handleChallenge(frame);
        break;
    case ControlType::Response:
        if (m_accepting && m_connectorNonce.isEmpty())
            return handleResponse(frame);
        break;
    case ControlType::Accept:
        if (!m_accepting && !m_connectorNonce.isEmpty())
            return handleAccept(frame);
        break;
    case ControlType::KeyMismatch:
        if (!m_accepting && !m_connectorNonce.isEmpty())
            return handleKeyMismatch(frame);
        break;
    case ControlType::Refuse:
        return handleRefuse(frame);
    case ControlType::UnsealedChallenge:
    case ControlType::UnsealedResponse:
        return refuseUnsealed();
    default:
        break;
    }
    refuse({ErrorCode::ProtocolViolation,
            QStringLiteral("%1 sent control message %2 out of order during the handshake")
                .arg(m_link->peerAddress())
                .arg(int(*type))});
}

void Handshake::handleChallenge(const Frame &frame)
{
    const auto challenge = decodeControl<Challenge>(frame);
    if (!challenge)
        return refuse(challenge.error());
    if (challenge->worldName != m_self.worldName)
        return refuse({ErrorCode::AuthenticationFailed,
                       QStringLiteral("%1 belongs to world '%2', not '%3'")
                           .arg(m_link->peerAddress(), challenge->worldName, m_self.worldName)});
    auto exchange = KeyExchange::generate();
    if (!exchange)
        return refuse(exchange.error());
    m_exchange = std::move(*exchange);
    const QByteArray ownPublicKey = m_exchange->publicKey();
    m_acceptorNonce = challenge->nonce;
    m_connectorNonce = randomNonce();
    m_peer.nodeId = challenge->nodeId;
    const PeerIdentity claim{m_purpose, m_self.nodeId, m_self.rank, m_self.listenAddress};
    if (auto derived = deriveSecrets(challenge->publicKey, claim); !derived)
        return refuse(derived.error());
    Response response;
    response.purpose = m_purpose;
    response.nonce = m_connectorNonce;
    response.mac = KeySchedule::connectorProof(*m_secrets);
    response.nodeId = claim.nodeId;
    response.rank = claim.rank;
    response.listenAddress = claim.listenAddress;
    response.publicKey = ownPublicKey;
    m_link->sendFrame(encodeControl(response));
}

void Handshake::handleResponse(const Frame &frame)
{
    const auto response = decodeControl<Response>(frame);
    if (!response)
        return refuse(response.error());
    m_connectorNonce = response->nonce;
    const PeerIdentity claim{response->purpose, response->nodeId, response->rank,
                             response->listenAddress};
    if (auto derived = deriveSecrets(response->publicKey, claim); !derived)
        return refuse(derived.error());
    // A well-formed proof that does not match was made with another key (or
    // over another handshake: someone in between changed it). Both ends
    // report that, the connector once the KeyMismatch reaches it.
    if (!equalConstantTime(KeySchedule::connectorProof(*m_secrets), response->mac))
        return refuseKeyMismatch({ErrorCode::WorldKeyMismatch,
                                  QStringLiteral("the world keys differ: the key proof of node %1 at %2 does not "
                                                 "match this node's world key")
                                      .arg(claim.nodeId, m_link->peerAddress())});
    if (m_admit) {
        if (auto admitted = m_admit(claim); !admitted)
            return refuse(admitted.error());
    }
    Accept accept;
    accept.mac = KeySchedule::acceptorProof(*m_secrets, m_self.rank, m_self.listenAddress);
    accept.rank = m_self.rank;
    accept.listenAddress = m_self.listenAddress;
    m_link->sendFrame(encodeControl(accept));
    succeed(claim);
}

void Handshake::handleAccept(const Frame &frame)
{
    const auto accept = decodeControl<Accept>(frame);
    if (!accept)
        return refuse(accept.error());
    const PeerIdentity claim{m_purpose, m_peer.nodeId, accept->rank, accept->listenAddress};
    const QByteArray expected = KeySchedule::acceptorProof(*m_secrets, accept->rank, accept->listenAddress);
    if (!equalConstantTime(expected, accept->mac))
        return fail({ErrorCode::AuthenticationFailed,
                     QStringLiteral("node %1 at %2 failed to prove the world key")
                         .arg(claim.nodeId, m_link->peerAddress())});
    succeed(claim);
}

void Handshake::handleKeyMismatch(const Frame &frame)
{
    if (const auto mismatch = decodeControl<KeyMismatch>(frame); !mismatch)
        return fail(mismatch.error());
    fail({ErrorCode::WorldKeyMismatch,
          QStringLiteral("the world keys differ: node %1 at %2 found that this node's key proof does not match "
                         "its world key")
              .arg(m_peer.nodeId, m_link->peerAddress())});
}

void Handshake::handleRefuse(const Frame &frame)
{
    const auto refusal = decodeControl<Refuse>(frame);
    fail({ErrorCode::AuthenticationFailed,
          QStringLiteral("%1 refused the link: %2")
              .arg(m_link->peerAddress(),
                   refusal ? refusal->reason : QStringLiteral("(unreadable reason)"))});
}

// An older MMPI's acceptor sends an unsealed Challenge, its connector an
// unsealed Response: neither can make a sealed link, and both hear why.
void Handshake::refuseUnsealed()
{
    refuse({ErrorCode::SealingUnsupported,
            QStringLiteral("%1 speaks the unsealed handshake of an older MMPI: this node makes sealed links only "
                           "(update the other node)")
                .arg(m_link->peerAddress())});
}

void Handshake::handleLinkClosed()
{
    if (m_done)
        return;
    const Error linkError = m_link->error();
    fail(linkError.isError() ? linkError
                             : Error{ErrorCode::LinkClosed,
                                     QStringLiteral("%1 closed the link during the handshake")
                                         .arg(m_link->peerAddress())});
}

void Handshake::refuse(const Error &error)
{
    if (m_link && m_link->state() == Link::State::Connected)
        m_link->sendFrame(encodeControl(Refuse{error.message}));
    fail(error);
}

void Handshake::refuseKeyMismatch(const Error &error)
{
    if (m_link && m_link->state() == Link::State::Connected)
        m_link->sendFrame(encodeControl(KeyMismatch{}));
    fail(error);
}

void Handshake::fail(const Error &error)
{
    if (m_done)
        return;
    finish();
    Link *link = m_link;
    if (link)
        link->close();
    Q_EMIT failed(link, error);
}

// The record ciphers take over the link before anything else is read: the
// peer's first sealed frame may already wait behind the Accept.
void Handshake::succeed(const PeerIdentity &peer)
{
    const bool accepting = m_accepting;
    const LinkSecrets secrets = *std::exchange(m_secrets, std::nullopt);
    Link *link = m_link;
    finish();
    using Direction = RecordCipher::Direction;
    auto toAcceptor = RecordCipher::create(secrets.connectorToAcceptorKey, Direction::ConnectorToAcceptor);
    auto toConnector = RecordCipher::create(secrets.acceptorToConnectorKey, Direction::AcceptorToConnector);
    if (!toAcceptor || !toConnector) {
        link->close();
        Q_EMIT failed(link, toAcceptor ? toConnector.error() : toAcceptor.error());
        return;
    }
    auto *sealed = accepting ? new SealedLink(link, std::move(*toConnector), std::move(*toAcceptor), link->parent())
                             : new SealedLink(link, std::move(*toAcceptor), std::move(*toConnector), link->parent());
    sealed->setVerificationCode(KeySchedule::verificationCode(secrets));
    Q_EMIT succeeded(sealed, peer);
}

void Handshake::finish()
{
    m_done = true;
    m_timer.stop();
    if (m_link)
        m_link->disconnect(this);
    deleteLater();
}

} // namespace mmpi::detail
