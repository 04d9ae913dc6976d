// AvahiClient: DNS-SD through avahi-daemon, the system's multicast DNS
// responder on most Linux desktops, over its D-Bus API (org.freedesktop.Avahi
// on the system bus): a node's service goes into an entry group, a root
// browses `_mmpi._tcp` and resolves each instance. Where the daemon runs the
// tcp transport uses this instead of its own MdnsResponder, so that one
// responder answers for the host (docs/guide/transports.md, "DNS-SD"). What
// the daemon resolves is as untrusted as a packet: the TXT goes through
// DnsSdService::fromTxt() and answers of another world are ignored.
#pragma once

#include "dnssdservice.h"

#include <mmpi/core/result.h>

#include <QDBusMessage>
#include <QDBusObjectPath>
#include <QHash>
#include <QObject>
#include <QSet>

#include <optional>

class QDBusPendingCallWatcher;

namespace mmpi {

class AvahiClient : public QObject
{
    Q_OBJECT
public:
    // How long a world found through the daemon holds: until its
    // serviceGone(), which the daemon's own cache decides (a day, in seconds).
    static constexpr int HeldUntilRemoved = 24 * 3600;

    explicit AvahiClient(QObject *parent = nullptr);
    ~AvahiClient() override;

    // Whether avahi-daemon is on the system bus and running (its state
    // RUNNING, host name established); asked afresh each time.
    static bool isAvailable();

    // Publish `service` on the interfaces of `interfaceIndexes` (kernel
    // indexes, as QNetworkInterface::index()), IPv4, until unpublish().
    // DiscoveryFailed with the daemon's reason when it refuses.
    Result<void> publish(const DnsSdService &service, const QList<int> &interfaceIndexes);
    void unpublish();
    // Browse for services of `kind` of world `worldHash` (worlds: empty for
    // every world) on those interfaces until stopBrowsing().
    Result<void> browse(const QByteArray &worldHash, const QList<int> &interfaceIndexes,
                        DnsSdService::Kind kind = DnsSdService::Kind::Node);
    void stopBrowsing();

Q_SIGNALS:
    // A resolved node of the browsed world; `sender` is the address Avahi resolved.
    void serviceFound(const mmpi::DnsSdService &service, const QHostAddress &sender);
    // The daemon dropped a browsed service (ItemRemove).
    void serviceGone(mmpi::DnsSdService::Kind kind, const QString &nodeId);

private Q_SLOTS:
    // org.freedesktop.Avahi.ServiceBrowser.ItemNew
    void handleItemNew(int interface, int protocol, const QString &name, const QString &type, const QString &domain,
                       uint flags);
    // org.freedesktop.Avahi.ServiceResolver.Found, of a world's resolver
    void handleResolverFound(const QDBusMessage &message);
    // org.freedesktop.Avahi.ServiceBrowser.ItemRemove
    void handleItemRemove(int interface, int protocol, const QString &name, const QString &type,
                          const QString &domain, uint flags);
    // org.freedesktop.Avahi.EntryGroup.StateChanged
    void handleGroupState(int state, const QString &error);

private:
    void handleResolved(QDBusPendingCallWatcher *call);
    void reportResolved(const QVariantList &args);
    void watchWorld(int interface, int protocol, const QString &name, const QString &type, const QString &domain);
    void freeResolver(const QString &key);
    Result<void> updateTxt(const DnsSdService &service);

    QDBusObjectPath m_group;
    std::optional<DnsSdService> m_published;
    QList<int> m_publishedOn;
    QDBusObjectPath m_browser;
    bool m_browsing = false;
    QByteArray m_browseHash;
    DnsSdService::Kind m_browseKind = DnsSdService::Kind::Node;
    QSet<int> m_browseInterfaces;
    // Worlds: "<interface>/<name>" -> the path of its ServiceResolver.
    QHash<QString, QString> m_resolvers;
};

} // namespace mmpi
