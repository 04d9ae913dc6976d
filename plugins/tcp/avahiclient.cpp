#include "avahiclient.h"

#include <mmpi/core/logging.h>

#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusInterface>
#include <QDBusMetaType>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusReply>

namespace mmpi {

namespace {

const QString Service = QStringLiteral("org.freedesktop.Avahi");
const QString ServerInterface = QStringLiteral("org.freedesktop.Avahi.Server");
// Avahi 0.8's second server interface, which has the *Prepare methods.
const QString Server2Interface = QStringLiteral("org.freedesktop.Avahi.Server2");
const QString GroupInterface = QStringLiteral("org.freedesktop.Avahi.EntryGroup");
const QString BrowserInterface = QStringLiteral("org.freedesktop.Avahi.ServiceBrowser");
const QString ResolverInterface = QStringLiteral("org.freedesktop.Avahi.ServiceResolver");
// avahi-common/defs.h: AVAHI_PROTO_INET, AVAHI_SERVER_RUNNING, entry group states.
constexpr int ProtoInet = 0;
constexpr int ServerRunning = 2;
constexpr int GroupCollision = 3;
constexpr int GroupFailure = 4;
// D-Bus calls to a local daemon answer in milliseconds; one that does not
// within this is hung, and the step gives up rather than the thread.
constexpr int CallTimeout = 2000;

Error failed(const QString &what, const QString &why)
{
    return Error(ErrorCode::DiscoveryFailed, QStringLiteral("avahi-daemon: %1: %2").arg(what, why));
}

QDBusMessage call(const QString &path, const QString &interface, const QString &method, const QVariantList &args = {})
{
    QDBusMessage message = QDBusMessage::createMethodCall(Service, path, interface, method);
    message.setArguments(args);
    return QDBusConnection::systemBus().call(message, QDBus::Block, CallTimeout);
}

} // namespace

AvahiClient::AvahiClient(QObject *parent)
    : QObject(parent)
{
    qDBusRegisterMetaType<QList<QByteArray>>();
}

AvahiClient::~AvahiClient()
{
    unpublish();
    stopBrowsing();
}

bool AvahiClient::isAvailable()
{
    QDBusConnection bus = QDBusConnection::systemBus();
    if (!bus.isConnected() || !bus.interface() || !bus.interface()->isServiceRegistered(Service))
        return false;
    const QDBusMessage state = call(QStringLiteral("/"), ServerInterface, QStringLiteral("GetState"));
    return state.type() == QDBusMessage::ReplyMessage && !state.arguments().isEmpty()
        && state.arguments().first().toInt() == ServerRunning;
}

Result<void> AvahiClient::publish(const DnsSdService &service, const QList<int> &interfaceIndexes)
{
    // The same instance again (a world's count of joined nodes): new TXT
    // strings in place, so browsers do not see it go and come back.
    if (m_published && m_published->instanceName() == service.instanceName() && m_publishedOn == interfaceIndexes)
        return updateTxt(service);
    unpublish();
    const QDBusMessage group = call(QStringLiteral("/"), ServerInterface, QStringLiteral("EntryGroupNew"));
    if (group.type() != QDBusMessage::ReplyMessage || group.arguments().isEmpty())
        return failed(QStringLiteral("no entry group"), group.errorMessage());
    m_group = group.arguments().first().value<QDBusObjectPath>();
    QDBusConnection::systemBus().connect(Service, m_group.path(), GroupInterface, QStringLiteral("StateChanged"), this,
                                         SLOT(handleGroupState(int, QString)));
    const QList<QByteArray> txt = service.txt();
    for (const int index : interfaceIndexes) {
        // The instance name is the node id and the host Avahi's own (empty
        // host): its A records are the daemon's, the TXT lists ours.
        const QDBusMessage added =
            call(m_group.path(), GroupInterface, QStringLiteral("AddService"),
                 {index, ProtoInet, 0u, service.nodeId, DnsSdService::typeText(service.kind), QString(), QString(),
                  QVariant::fromValue(service.port),
                  QVariant::fromValue(txt)});
        if (added.type() != QDBusMessage::ReplyMessage) {
            const Error error = failed(QStringLiteral("cannot add service %1").arg(service.nodeId), added.errorMessage());
            unpublish();
            return error;
        }
    }
    const QDBusMessage committed = call(m_group.path(), GroupInterface, QStringLiteral("Commit"));
    if (committed.type() != QDBusMessage::ReplyMessage) {
        const Error error = failed(QStringLiteral("cannot commit service %1").arg(service.nodeId),
                                   committed.errorMessage());
        unpublish();
        return error;
    }
    m_published = service;
    m_publishedOn = interfaceIndexes;
    return success();
}

Result<void> AvahiClient::updateTxt(const DnsSdService &service)
{
    for (const int index : std::as_const(m_publishedOn)) {
        const QDBusMessage updated =
            call(m_group.path(), GroupInterface, QStringLiteral("UpdateServiceTxt"),
                 {index, ProtoInet, 0u, service.nodeId, DnsSdService::typeText(service.kind), QString(),
                  QVariant::fromValue(service.txt())});
        if (updated.type() != QDBusMessage::ReplyMessage)
            return failed(QStringLiteral("cannot update service %1").arg(service.nodeId), updated.errorMessage());
    }
    m_published = service;
    return success();
}

void AvahiClient::unpublish()
{
    m_published.reset();
    m_publishedOn.clear();
    if (m_group.path().isEmpty())
        return;
    QDBusConnection::systemBus().disconnect(Service, m_group.path(), GroupInterface, QStringLiteral("StateChanged"),
                                            this, SLOT(handleGroupState(int, QString)));
    // Free withdraws the records (the daemon sends the goodbyes).
    QDBusConnection::systemBus().call(QDBusMessage::createMethodCall(Service, m_group.path(), GroupInterface,
                                                                     QStringLiteral("Free")),
                                      QDBus::NoBlock);
    m_group = {};
}

void AvahiClient::handleGroupState(int state, const QString &error)
{
    // A collision would mean another node with this node id: ids are
    // random UUIDs, so it is someone imitating one; the daemon withdraws
    // the service, and the step's timeout reports the silence.
    if (state == GroupCollision || state == GroupFailure)
        qCWarning(lcTransport).noquote() << "avahi-daemon withdrew this node's DNS-SD service:"
                                         << (error.isEmpty() ? QStringLiteral("state %1").arg(state) : error);
}

Result<void> AvahiClient::browse(const QByteArray &worldHash, const QList<int> &interfaceIndexes,
                                 DnsSdService::Kind kind)
{
    stopBrowsing();
    // ServiceBrowserPrepare, then Start (Avahi 0.8): the signals are
    // connected before the first can come.
    const QDBusMessage browser = call(QStringLiteral("/"), Server2Interface, QStringLiteral("ServiceBrowserPrepare"),
                                      {-1, ProtoInet, DnsSdService::typeText(kind), QStringLiteral("local"), 0u});
    if (browser.type() != QDBusMessage::ReplyMessage || browser.arguments().isEmpty())
        return failed(QStringLiteral("no service browser"), browser.errorMessage());
    m_browser = browser.arguments().first().value<QDBusObjectPath>();
    m_browsing = true;
    m_browseHash = worldHash;
    m_browseKind = kind;
    m_browseInterfaces = QSet<int>(interfaceIndexes.begin(), interfaceIndexes.end());
    QDBusConnection::systemBus().connect(Service, m_browser.path(), BrowserInterface, QStringLiteral("ItemNew"), this,
                                         SLOT(handleItemNew(int, int, QString, QString, QString, uint)));
    QDBusConnection::systemBus().connect(Service, m_browser.path(), BrowserInterface, QStringLiteral("ItemRemove"),
                                         this, SLOT(handleItemRemove(int, int, QString, QString, QString, uint)));
    const QDBusMessage started = call(m_browser.path(), BrowserInterface, QStringLiteral("Start"));
    if (started.type() != QDBusMessage::ReplyMessage) {
        const Error error = failed(QStringLiteral("cannot browse"), started.errorMessage());
        stopBrowsing();
        return error;
    }
    return success();
}

void AvahiClient::stopBrowsing()
{
    m_browsing = false;
    m_browseHash.clear();
    for (const QString &key : m_resolvers.keys())
        freeResolver(key);
    if (m_browser.path().isEmpty())
        return;
    QDBusConnection::systemBus().disconnect(Service, m_browser.path(), BrowserInterface, QStringLiteral("ItemNew"),
                                            this, SLOT(handleItemNew(int, int, QString, QString, QString, uint)));
    QDBusConnection::systemBus().disconnect(Service, m_browser.path(), BrowserInterface, QStringLiteral("ItemRemove"),
                                            this, SLOT(handleItemRemove(int, int, QString, QString, QString, uint)));
    QDBusConnection::systemBus().call(QDBusMessage::createMethodCall(Service, m_browser.path(), BrowserInterface,
                                                                     QStringLiteral("Free")),
                                      QDBus::NoBlock);
    m_browser = {};
}

void AvahiClient::handleItemNew(int interface, int protocol, const QString &name, const QString &type,
                                const QString &domain, uint)
{
    qCDebug(lcTransport).noquote() << "avahi-daemon: found" << name << "on interface" << interface;
    if (!m_browsing || !m_browseInterfaces.contains(interface))
        return;
    if (m_browseKind == DnsSdService::Kind::World)
        return watchWorld(interface, protocol, name, type, domain);
    QDBusMessage resolve = QDBusMessage::createMethodCall(Service, QStringLiteral("/"), ServerInterface,
                                                          QStringLiteral("ResolveService"));
    resolve.setArguments({interface, protocol, name, type, domain, ProtoInet, 0u});
    auto *watcher = new QDBusPendingCallWatcher(QDBusConnection::systemBus().asyncCall(resolve, CallTimeout), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, &AvahiClient::handleResolved);
}

void AvahiClient::watchWorld(int interface, int protocol, const QString &name, const QString &type,
                             const QString &domain)
{
    // A resolver, not one ResolveService: it says Found again when the
    // root's TXT changes (the count of joined nodes), until it is freed.
    const QString key = QStringLiteral("%1/%2").arg(interface).arg(name);
    if (m_resolvers.contains(key))
        return;
    const QDBusMessage resolver = call(QStringLiteral("/"), Server2Interface, QStringLiteral("ServiceResolverPrepare"),
                                       {interface, protocol, name, type, domain, ProtoInet, 0u});
    if (resolver.type() != QDBusMessage::ReplyMessage || resolver.arguments().isEmpty()) {
        qCDebug(lcTransport).noquote() << "avahi-daemon: no resolver for" << name << ":" << resolver.errorMessage();
        return;
    }
    const QString path = resolver.arguments().first().value<QDBusObjectPath>().path();
    m_resolvers.insert(key, path);
    QDBusConnection::systemBus().connect(Service, path, ResolverInterface, QStringLiteral("Found"), this,
                                         SLOT(handleResolverFound(QDBusMessage)));
    call(path, ResolverInterface, QStringLiteral("Start"));
}

void AvahiClient::freeResolver(const QString &key)
{
    const QString path = m_resolvers.take(key);
    if (path.isEmpty())
        return;
    QDBusConnection::systemBus().disconnect(Service, path, ResolverInterface, QStringLiteral("Found"), this,
                                            SLOT(handleResolverFound(QDBusMessage)));
    QDBusConnection::systemBus().call(QDBusMessage::createMethodCall(Service, path, ResolverInterface,
                                                                     QStringLiteral("Free")),
                                      QDBus::NoBlock);
}

void AvahiClient::handleResolverFound(const QDBusMessage &message)
{
    if (m_browsing)
        reportResolved(message.arguments());
}

void AvahiClient::handleResolved(QDBusPendingCallWatcher *call)
{
    call->deleteLater();
    const QDBusMessage reply = call->reply();
    if (!m_browsing || reply.type() != QDBusMessage::ReplyMessage) {
        qCDebug(lcTransport).noquote() << "avahi-daemon could not resolve a service:" << reply.errorMessage();
        return;
    }
    reportResolved(reply.arguments());
}

void AvahiClient::reportResolved(const QVariantList &args)
{
    // (interface, protocol, name, type, domain, host, aprotocol, address, port, txt, flags)
    if (args.size() != 11) {
        qCDebug(lcTransport).noquote() << "avahi-daemon: a resolved service of" << args.size() << "values";
        return;
    }
    const QString name = args.at(2).toString();
    QList<QByteArray> txt;
    if (args.at(9).canConvert<QDBusArgument>())
        args.at(9).value<QDBusArgument>() >> txt;
    else
        txt = args.at(9).value<QList<QByteArray>>();
    auto service = DnsSdService::fromTxt(txt, m_browseKind);
    if (!service) {
        qCDebug(lcTransport).noquote() << "avahi-daemon: ignoring" << name << ":" << service.error().message;
        return;
    }
    const bool otherWorld = !m_browseHash.isEmpty() && service->worldHash != m_browseHash;
    if (otherWorld || service->nodeId != name) {
        qCDebug(lcTransport).noquote() << "avahi-daemon: ignoring" << name
                                       << (otherWorld ? "(another world)" : "(another node's TXT)");
        return;
    }
    service->port = quint16(args.at(8).toUInt());
    const QHostAddress sender(args.at(7).toString());
    if (service->port == 0 || sender.isNull()) {
        qCDebug(lcTransport).noquote() << "avahi-daemon: ignoring" << name << "at" << args.at(7).toString() << "port"
                                       << service->port;
        return;
    }
    qCDebug(lcTransport).noquote() << "avahi-daemon: resolved" << name << "at" << sender.toString() << "port"
                                   << service->port;
    Q_EMIT serviceFound(*service, sender);
}

void AvahiClient::handleItemRemove(int interface, int, const QString &name, const QString &, const QString &, uint)
{
    // The daemon's cache let the service go (a goodbye, or its time to live ran out).
    freeResolver(QStringLiteral("%1/%2").arg(interface).arg(name));
    if (m_browsing && m_browseInterfaces.contains(interface))
        Q_EMIT serviceGone(m_browseKind, name);
}

} // namespace mmpi
