#include <mmpi/world/worldbrowser.h>

#include <mmpi/core/logging.h>
#include <mmpi/transport/transportregistry.h>

namespace mmpi {

namespace {

// Often enough that a world is gone within a second of its time to live.
constexpr int ExpiryCheckInterval = 250;

WorldBrowser::FoundBy foundBy(WorldAnnouncement::Channel channel)
{
    return channel == WorldAnnouncement::Channel::Beacon ? WorldBrowser::FoundBy::Beacon
                                                         : WorldBrowser::FoundBy::DnsSd;
}

} // namespace

WorldBrowser::WorldBrowser(QObject *parent) : QObject(parent), m_expiry(this)
{
    qRegisterMetaType<mmpi::WorldBrowser::FoundWorld>();
    m_expiry.setInterval(ExpiryCheckInterval);
    connect(&m_expiry, &QTimer::timeout, this, &WorldBrowser::expire);
}

WorldBrowser::~WorldBrowser()
{
    stop();
}

Result<void> WorldBrowser::start(const QString &transport, const QVariantMap &options)
{
    stop();
    auto created = TransportRegistry::create(transport, this);
    if (!created)
        return created.error();
    Transport *t = *created;
    auto fail = [t](const Error &error) {
        delete t;
        return error;
    };
    if (!t->supportsWorldAnnouncements())
        return fail(Error(ErrorCode::DiscoveryFailed,
                          QStringLiteral("transport %1 does not announce worlds").arg(transport)));
    if (auto configured = t->configure(options); !configured)
        return fail(configured.error());
    connect(t, &Transport::worldAnnounced, this, &WorldBrowser::handleAnnouncement);
    if (auto browsing = t->browseWorlds(); !browsing)
        return fail(browsing.error());
    m_transport = t;
    m_transportName = transport;
    m_options = options;
    m_clock.start();
    m_expiry.start();
    qCInfo(lcWorld).noquote() << "browser: looking for worlds over transport" << transport;
    return success();
}

void WorldBrowser::stop()
{
    m_expiry.stop();
    if (m_transport) {
        m_transport->stopBrowsingWorlds();
        m_transport->deleteLater();
    }
    m_transport = nullptr;
    // Without a transport nothing is refreshed: the list would only grow stale.
    for (const Entry &entry : std::exchange(m_entries, {}))
        Q_EMIT worldLost(entry.world.rootId);
}

QList<WorldBrowser::FoundWorld> WorldBrowser::worlds() const
{
    QList<FoundWorld> out;
    for (const Entry &entry : m_entries)
        out << entry.world;
    return out;
}

Result<WorldBrowser::FoundWorld> WorldBrowser::world(const QString &rootId) const
{
    const qsizetype i = indexOf(rootId);
    if (i < 0)
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("no world of root '%1' is in the list (%2 found)")
                                                     .arg(rootId.left(64))
                                                     .arg(m_entries.size()));
    return m_entries.at(i).world;
}

Result<WorldConfig> WorldBrowser::joinConfig(const QString &rootId, WorldConfig base) const
{
    const auto found = world(rootId);
    if (!found)
        return found.error();
    base.mode = WorldConfig::Mode::Discovered;
    base.rank = NoRank;
    base.worldName = found->name;
    base.size = std::max(1, found->wanted);
    base.transport = m_transportName;
    base.transportOptions = m_options;
    return base;
}

qsizetype WorldBrowser::indexOf(const QString &rootId) const
{
    for (qsizetype i = 0; i < m_entries.size(); ++i)
        if (m_entries.at(i).world.rootId == rootId)
            return i;
    return -1;
}

void WorldBrowser::handleAnnouncement(const WorldAnnouncement &announcement)
{
    const FoundBy channel = foundBy(announcement.channel);
    if (announcement.ttlSeconds <= 0)
        return withdraw(announcement.rootId, channel);
    if (announcement.worldName.isEmpty() || announcement.rootId.isEmpty())
        return;
    const qsizetype i = indexOf(announcement.rootId);
    if (i >= 0)
        return refresh(m_entries[i], announcement, channel);
    if (m_entries.size() >= MaxWorlds) {
        qCDebug(lcWorld).noquote() << "browser: ignoring world" << announcement.worldName.left(64) << "of"
                                   << announcement.rootId.left(64) << ": already" << MaxWorlds << "listed";
        return;
    }
    Entry entry;
    refresh(entry, announcement, channel);
    m_entries << entry;
    qCInfo(lcWorld).noquote() << "browser: found world" << entry.world.name << "of" << entry.world.rootId << "on"
                              << entry.world.host << entry.world.joined << "of" << entry.world.wanted << "joined";
    Q_EMIT worldFound(entry.world);
}

void WorldBrowser::refresh(Entry &entry, const WorldAnnouncement &announcement, FoundBy channel)
{
    const FoundWorld before = entry.world;
    const bool isNew = entry.world.rootId.isEmpty();
    entry.expires[int(channel)] = m_clock.elapsed() + qint64(announcement.ttlSeconds) * 1000;
    entry.world = {announcement.worldName, announcement.rootId, announcement.hostName, announcement.addresses,
                   announcement.joined, announcement.wanted,
                   entry.expires[int(FoundBy::DnsSd)] >= 0 ? FoundBy::DnsSd : FoundBy::Beacon};
    if (!isNew && entry.world != before)
        Q_EMIT worldUpdated(entry.world);
}

void WorldBrowser::withdraw(const QString &rootId, FoundBy channel)
{
    const qsizetype i = indexOf(rootId);
    if (i < 0)
        return;
    Entry &entry = m_entries[i];
    // Expired now if no other channel holds it; else it is found by that one.
    entry.expires[int(channel)] = m_clock.elapsed() - 1;
    expire();
}

void WorldBrowser::expire()
{
    // Signals after the list is settled: a slot may stop() the browser.
    QStringList lost;
    QList<FoundWorld> changed;
    const qint64 now = m_clock.elapsed();
    for (qsizetype i = m_entries.size() - 1; i >= 0; --i) {
        Entry &entry = m_entries[i];
        for (qint64 &at : entry.expires)
            if (at >= 0 && at < now)
                at = -1;
        const FoundBy by = entry.expires[int(FoundBy::DnsSd)] >= 0 ? FoundBy::DnsSd : FoundBy::Beacon;
        if (entry.expires[0] < 0 && entry.expires[1] < 0) {
            lost << entry.world.rootId;
            m_entries.removeAt(i);
        } else if (by != entry.world.foundBy) {
            entry.world.foundBy = by;
            changed << entry.world;
        }
    }
    for (const FoundWorld &world : std::as_const(changed))
        Q_EMIT worldUpdated(world);
    for (const QString &rootId : std::as_const(lost)) {
        qCInfo(lcWorld).noquote() << "browser: world of" << rootId << "is gone";
        Q_EMIT worldLost(rootId);
    }
}

} // namespace mmpi
