// MdnsResponder: the tcp transport's own multicast DNS (RFC 6762) querier
// and responder, for DNS-SD where no system daemon does it (a container,
// Android). On the interfaces InterfaceFilter keeps it joins 224.0.0.251 on
// UDP port 5353, shared with other processes and daemons of the host; a
// node's responder announces its DnsSdService and answers queries for it,
// a root's asks for `_mmpi._tcp.local` and reports each node of its world
// it hears (docs/guide/transports.md, "DNS-SD"). Datagrams are untrusted:
// DnsMessage::parse() refuses what is malformed, and answers of another
// world are ignored, each with a debug log.
#pragma once

#include "dnssdservice.h"

#include <mmpi/core/result.h>
#include <mmpi/transport/interfacefilter.h>

#include <QNetworkInterface>
#include <QSet>
#include <QTimer>

#include <optional>

class QUdpSocket;

namespace mmpi {

class MdnsResponder : public QObject
{
    Q_OBJECT
public:
    static constexpr quint16 DefaultPort = 5353;
    static QHostAddress group(); // 224.0.0.251

    explicit MdnsResponder(QObject *parent = nullptr);
    ~MdnsResponder() override;

    // Where the socket goes when publish() or browse() first opens it.
    void setInterfaces(const InterfaceFilter &filter) { m_filter = filter; }
    void setPort(quint16 port) { m_port = port; }
    // The interfaces the socket joined the group on (empty when closed).
    QStringList interfaceNames() const;

    // Announce `service` and answer for it until unpublish(), which sends
    // a goodbye. DiscoveryFailed when the socket cannot be opened (port
    // taken without sharing, no interface that multicasts).
    Result<void> publish(const DnsSdService &service);
    void unpublish();
    // Ask for services of `kind` of the world whose hash is `worldHash`
    // (worlds: empty for every world) until stopBrowsing().
    Result<void> browse(const QByteArray &worldHash, DnsSdService::Kind kind = DnsSdService::Kind::Node);
    void stopBrowsing();

Q_SIGNALS:
    // A node of the browsed world; `sender` is where its response came from.
    void serviceFound(const mmpi::DnsSdService &service, const QHostAddress &sender);
    // A goodbye of the browsed kind: node (or root) `nodeId` withdrew its service.
    void serviceGone(mmpi::DnsSdService::Kind kind, const QString &nodeId);

private:
    Result<void> open();
    void closeIfIdle();
    void readDatagrams();
    void handleQuery(const DnsMessage &query, const QHostAddress &sender, quint16 senderPort, int interfaceIndex);
    void handleResponse(const DnsMessage &response, const QHostAddress &sender);
    void announce();
    void sendQuery();
    void sendPendingReplies();
    // Sends `message` to the group out of the interfaces of `indexes` (all when empty).
    void sendMulticast(const DnsMessage &message, const QSet<int> &indexes = {});
    DnsMessage answerFor(quint16 id, const QList<DnsMessage::Question> &questions, bool legacy) const;

    InterfaceFilter m_filter;
    quint16 m_port = DefaultPort;
    QUdpSocket *m_socket = nullptr;
    QList<QNetworkInterface> m_interfaces;
    // Publishing: the service, its announcements so far, the interfaces
    // that asked and wait for the (delayed) answer.
    std::optional<DnsSdService> m_published;
    QList<DnsMessage::Record> m_records;
    int m_announcements = 0;
    QTimer m_announceTimer;
    QSet<int> m_pendingReplies;
    QTimer m_replyTimer;
    // Browsing.
    bool m_browsing = false;
    QByteArray m_browseHash;
    DnsSdService::Kind m_browseKind = DnsSdService::Kind::Node;
    int m_queries = 0;
    QTimer m_queryTimer;
};

} // namespace mmpi
