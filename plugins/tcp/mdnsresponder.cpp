#include "mdnsresponder.h"

#include <mmpi/core/logging.h>

#include <QNetworkDatagram>
#include <QPointer>
#include <QRandomGenerator>
#include <QUdpSocket>
#include <QVariant>

namespace mmpi {

namespace {

// Announcements (RFC 6762 section 8.3) and queries (section 5.2) start at a
// quarter second and double, rather than the RFC's one second: a world
// forms while people wait, and a handful of nodes is little traffic. A node
// announces eight times (0.25 ... 32 s), as the RFC allows; a root keeps
// asking every 4 s at most until it stops browsing.
constexpr int FirstInterval = 250;
constexpr int Announcements = 8;
constexpr int LongestQueryInterval = 4000;
// Legacy unicast answers (section 6.7) carry at most this time to live.
constexpr quint32 LegacyTtl = 10;

bool asks(const DnsMessage::Question &q, const DnsMessage::Name &name, std::initializer_list<quint16> types)
{
    if (!DnsMessage::sameName(q.name, name) || (q.questionClass & ~DnsMessage::TopClassBit) != DnsMessage::ClassIn)
        return false;
    return q.type == DnsMessage::Any || std::find(types.begin(), types.end(), q.type) != types.end();
}

} // namespace

QHostAddress MdnsResponder::group()
{
    return QHostAddress(QStringLiteral("224.0.0.251"));
}

MdnsResponder::MdnsResponder(QObject *parent)
    : QObject(parent), m_announceTimer(this), m_replyTimer(this), m_queryTimer(this)
{
    m_announceTimer.setSingleShot(true);
    m_replyTimer.setSingleShot(true);
    m_queryTimer.setSingleShot(true);
    connect(&m_announceTimer, &QTimer::timeout, this, &MdnsResponder::announce);
    connect(&m_replyTimer, &QTimer::timeout, this, &MdnsResponder::sendPendingReplies);
    connect(&m_queryTimer, &QTimer::timeout, this, &MdnsResponder::sendQuery);
}

MdnsResponder::~MdnsResponder()
{
    unpublish();
}

QStringList MdnsResponder::interfaceNames() const
{
    QStringList names;
    for (const QNetworkInterface &interface : m_interfaces)
        names << interface.name();
    return names;
}

Result<void> MdnsResponder::open()
{
    if (m_socket)
        return success();
    QList<QNetworkInterface> usable;
    QStringList kept;
    for (const QNetworkInterface &interface : m_filter.interfaces()) {
        kept << interface.name();
        const QList<QNetworkAddressEntry> entries = interface.addressEntries();
        const bool v4 = std::any_of(entries.begin(), entries.end(), [](const QNetworkAddressEntry &e) {
            return e.ip().protocol() == QAbstractSocket::IPv4Protocol;
        });
        if ((interface.flags() & QNetworkInterface::CanMulticast) && v4)
            usable << interface;
    }
    if (usable.isEmpty())
        return Error(ErrorCode::DiscoveryFailed,
                     kept.isEmpty() ? QStringLiteral("no interface for multicast DNS: the interface rule keeps none "
                                                     "(name them with the tcp option 'interfaces')")
                                    : QStringLiteral("no interface for multicast DNS: of %1 none can multicast "
                                                     "with an IPv4 address").arg(kept.join(QStringLiteral(", "))));
    auto *socket = new QUdpSocket(this);
    // Shared: avahi-daemon, other apps and other nodes of this host listen
    // on 5353 too, and each socket gets its own copy of every multicast.
    if (!socket->bind(QHostAddress::AnyIPv4, m_port, QUdpSocket::ShareAddress | QUdpSocket::ReuseAddressHint)) {
        const QString reason = socket->errorString();
        delete socket;
        return Error(ErrorCode::DiscoveryFailed,
                     QStringLiteral("cannot listen for multicast DNS on UDP port %1: %2").arg(m_port).arg(reason));
    }
    // Section 11: hop limit 255, so a receiver can tell on-link packets.
    socket->setSocketOption(QAbstractSocket::MulticastTtlOption, QVariant(255));
    // Other nodes on this host hear what this one sends.
    socket->setSocketOption(QAbstractSocket::MulticastLoopbackOption, QVariant(1));
    QStringList failures;
    for (const QNetworkInterface &interface : std::as_const(usable)) {
        if (socket->joinMulticastGroup(group(), interface))
            m_interfaces << interface;
        else
            failures << QStringLiteral("%1 (%2)").arg(interface.name(), socket->errorString());
    }
    if (m_interfaces.isEmpty()) {
        delete socket;
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("cannot join multicast group 224.0.0.251 on %1")
                                                     .arg(failures.join(QStringLiteral(", "))));
    }
    if (!failures.isEmpty())
        qCDebug(lcTransport).noquote() << "mDNS: not joined on" << failures.join(QStringLiteral(", "));
    m_socket = socket;
    connect(socket, &QUdpSocket::readyRead, this, &MdnsResponder::readDatagrams);
    qCDebug(lcTransport).noquote() << "mDNS: on port" << m_port << "of" << interfaceNames().join(QStringLiteral(", "));
    return success();
}

void MdnsResponder::closeIfIdle()
{
    if (m_published || m_browsing || !m_socket)
        return;
    // deleteLater: this may run from a serviceFound slot inside readDatagrams().
    m_socket->disconnect(this);
    m_socket->deleteLater();
    m_socket = nullptr;
    m_interfaces.clear();
}

Result<void> MdnsResponder::publish(const DnsSdService &service)
{
    auto records = service.records(service.ttl());
    if (!records)
        return records.error();
    // The same instance again (a world's count of joined nodes) replaces
    // its records in place: the cache-flush bit on the new TXT does what a
    // goodbye would, without the instance vanishing from browsers meanwhile.
    if (!m_published || m_published->instanceName() != service.instanceName())
        unpublish();
    if (auto opened = open(); !opened)
        return opened;
    m_published = service;
    m_records = *records;
    m_announcements = 0;
    announce();
    return success();
}

void MdnsResponder::unpublish()
{
    m_announceTimer.stop();
    m_replyTimer.stop();
    m_pendingReplies.clear();
    if (!m_published)
        return;
    // A goodbye (section 10.1): the same records with time to live 0, so
    // that caches drop them now rather than in two minutes.
    if (m_socket) {
        DnsMessage goodbye;
        goodbye.flags = DnsMessage::ResponseFlags;
        goodbye.answers = m_records;
        for (DnsMessage::Record &r : goodbye.answers)
            r.ttl = 0;
        sendMulticast(goodbye);
    }
    m_published.reset();
    m_records.clear();
    closeIfIdle();
}

Result<void> MdnsResponder::browse(const QByteArray &worldHash, DnsSdService::Kind kind)
{
    // Worlds are browsed by any name; nodes only of one world.
    const bool anyWorld = kind == DnsSdService::Kind::World && worldHash.isEmpty();
    if (!anyWorld && worldHash.size() != DnsSdService::WorldHashSize)
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("a world hash has %1 bytes, not %2")
                                                     .arg(DnsSdService::WorldHashSize).arg(worldHash.size()));
    stopBrowsing();
    if (auto opened = open(); !opened)
        return opened;
    m_browsing = true;
    m_browseHash = worldHash;
    m_browseKind = kind;
    m_queries = 0;
    sendQuery();
    return success();
}

void MdnsResponder::stopBrowsing()
{
    m_queryTimer.stop();
    m_browsing = false;
    m_browseHash.clear();
    closeIfIdle();
}

void MdnsResponder::readDatagrams()
{
    QPointer<MdnsResponder> self(this);
    while (self && m_socket && m_socket->hasPendingDatagrams()) {
        // One byte over the limit is enough to tell an oversized message.
        const QNetworkDatagram datagram = m_socket->receiveDatagram(DnsMessage::MaxMessageSize + 1);
        if (!datagram.isValid())
            return;
        const auto message = DnsMessage::parse(datagram.data());
        if (!message) {
            qCDebug(lcTransport).noquote() << "mDNS: ignoring a message from" << datagram.senderAddress().toString()
                                           << ":" << message.error().message;
            continue;
        }
        if (message->isResponse()) {
            if (m_browsing)
                handleResponse(*message, datagram.senderAddress());
        } else if (m_published) {
            handleQuery(*message, datagram.senderAddress(), quint16(datagram.senderPort()), int(datagram.interfaceIndex()));
        }
    }
}

void MdnsResponder::handleQuery(const DnsMessage &query, const QHostAddress &sender, quint16 senderPort,
                                int interfaceIndex)
{
    const DnsSdService &service = *m_published;
    bool asked = false;
    for (const DnsMessage::Question &q : query.questions)
        asked = asked || asks(q, service.typeName(), {DnsMessage::Ptr})
             || asks(q, DnsSdService::enumerationName(), {DnsMessage::Ptr})
             || asks(q, service.instanceName(), {DnsMessage::Srv, DnsMessage::Txt})
             || asks(q, service.hostName(), {DnsMessage::A, DnsMessage::Aaaa});
    if (!asked)
        return;
    // A query from another port than 5353 is a plain DNS client's (section
    // 6.7): it gets a unicast answer, now, to where it asked from.
    if (senderPort != m_port) {
        auto bytes = answerFor(query.id, query.questions, true).encode();
        if (bytes)
            m_socket->writeDatagram(*bytes, sender, senderPort);
        return;
    }
    // Known-answer suppression (section 7.1): the asker still holds our
    // PTR for at least half its time to live.
    for (const DnsMessage::Record &known : query.answers)
        if (known.type == DnsMessage::Ptr && known.ttl >= service.ttl() / 2
            && DnsMessage::sameName(known.name, service.typeName())
            && DnsMessage::sameName(known.target, service.instanceName()))
            return;
    // Section 6: shared records (the PTR) are answered after 20-120 ms, so
    // that the answers of many responders do not collide; queries that come
    // meanwhile share the one answer.
    m_pendingReplies.insert(interfaceIndex);
    if (!m_replyTimer.isActive())
        m_replyTimer.start(int(QRandomGenerator::global()->bounded(20, 121)));
}

DnsMessage MdnsResponder::answerFor(quint16 id, const QList<DnsMessage::Question> &questions, bool legacy) const
{
    DnsMessage answer;
    answer.id = id;
    answer.flags = DnsMessage::ResponseFlags;
    answer.answers = m_records;
    bool enumeration = false;
    for (const DnsMessage::Question &q : questions)
        enumeration = enumeration || asks(q, DnsSdService::enumerationName(), {DnsMessage::Ptr});
    if (enumeration) {
        DnsMessage::Record service = DnsMessage::makeRecord(DnsSdService::enumerationName(), DnsMessage::Ptr,
                                                            DnsMessage::ClassIn, DnsSdService::Ttl);
        service.target = m_published->typeName();
        answer.answers << service;
    }
    if (legacy) {
        // Repeats the question, no cache-flush bit, a short time to live.
        answer.questions = questions;
        for (DnsMessage::Record &r : answer.answers) {
            r.recordClass &= ~DnsMessage::TopClassBit;
            r.ttl = std::min(r.ttl, LegacyTtl);
        }
    }
    return answer;
}

void MdnsResponder::sendPendingReplies()
{
    if (!m_published)
        return;
    // Index 0: the kernel did not say where the query came in; answer on all.
    const QSet<int> indexes = m_pendingReplies.contains(0) ? QSet<int>() : m_pendingReplies;
    m_pendingReplies.clear();
    sendMulticast(answerFor(0, {}, false), indexes);
}

void MdnsResponder::handleResponse(const DnsMessage &response, const QHostAddress &sender)
{
    QStringList ignored;
    const QList<DnsSdService> services = DnsSdService::fromMessage(response, m_browseHash, &ignored, m_browseKind);
    for (const QString &why : std::as_const(ignored))
        qCDebug(lcTransport).noquote() << "mDNS: ignoring an answer from" << sender.toString() << ":" << why;
    QPointer<MdnsResponder> self(this);
    for (const DnsSdService &service : services) {
        if (!self || !m_browsing)
            return;
        Q_EMIT serviceFound(service, sender);
    }
    for (const QString &nodeId : DnsSdService::goodbyesIn(response, m_browseKind)) {
        if (!self || !m_browsing)
            return;
        Q_EMIT serviceGone(m_browseKind, nodeId);
    }
}

void MdnsResponder::announce()
{
    if (!m_published)
        return;
    sendMulticast(answerFor(0, {}, false));
    if (++m_announcements < Announcements)
        m_announceTimer.start(FirstInterval << (m_announcements - 1));
}

void MdnsResponder::sendQuery()
{
    if (!m_browsing)
        return;
    DnsMessage query;
    query.questions << DnsMessage::Question{DnsSdService::serviceName(m_browseKind), DnsMessage::Ptr,
                                            DnsMessage::ClassIn};
    sendMulticast(query);
    ++m_queries;
    m_queryTimer.start(std::min(FirstInterval << std::min(m_queries - 1, 8), LongestQueryInterval));
}

void MdnsResponder::sendMulticast(const DnsMessage &message, const QSet<int> &indexes)
{
    if (!m_socket)
        return;
    const auto bytes = message.encode();
    if (!bytes) {
        qCWarning(lcTransport).noquote() << "mDNS: cannot write a message:" << bytes.error().message;
        return;
    }
    for (const QNetworkInterface &interface : std::as_const(m_interfaces)) {
        if (!indexes.isEmpty() && !indexes.contains(interface.index()))
            continue;
        m_socket->setMulticastInterface(interface);
        if (m_socket->writeDatagram(*bytes, group(), m_port) < 0)
            qCDebug(lcTransport).noquote() << "mDNS: not sent on" << interface.name() << ":" << m_socket->errorString();
    }
}

} // namespace mmpi
