// WorldBrowser: the worlds nearby, for a device that has not chosen one, from
// what their roots announce (DNS-SD, the tcp beacon); a world goes at its
// root's goodbye or when not heard again within its time to live.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/transport/transport.h>
#include <mmpi/world/worldconfig.h>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <array>

namespace mmpi {

class WorldBrowser : public QObject
{
    Q_OBJECT
public:
    enum class FoundBy { DnsSd, Beacon };
    Q_ENUM(FoundBy)

    // Announcements come from anyone on the network: no more worlds than
    // this are kept, so a flood of made-up ones cannot grow the list.
    static constexpr int MaxWorlds = 64;

    struct FoundWorld
    {
        QString name;
        QString rootId;
        QString host;          // the root's host name ("" if it gave none)
        QStringList addresses; // where the root listens, best first
        int joined = 0;
        int wanted = 0;
        FoundBy foundBy = FoundBy::DnsSd; // DnsSd while DNS-SD holds it, else Beacon
        bool operator==(const FoundWorld &) const = default;
    };

    explicit WorldBrowser(QObject *parent = nullptr);
    ~WorldBrowser() override;

    // Browse over `transport` configured with `options` (as WorldConfig's)
    // until stop(). UnknownTransport, BadConfiguration, or DiscoveryFailed
    // when the transport announces no worlds or can hear none.
    Result<void> start(const QString &transport, const QVariantMap &options = {});
    void stop();
    bool isBrowsing() const { return m_transport != nullptr; }

    QList<FoundWorld> worlds() const;
    // DiscoveryFailed if no world of that root is in the list.
    Result<FoundWorld> world(const QString &rootId) const;
    // `base` made to join the world of `rootId` as a discovered node: its
    // name, size, this browser's transport and options. The key stays
    // `base`'s (or its join code's): an announcement carries none.
    Result<WorldConfig> joinConfig(const QString &rootId, WorldConfig base = {}) const;

Q_SIGNALS:
    void worldFound(const mmpi::WorldBrowser::FoundWorld &world);
    void worldUpdated(const mmpi::WorldBrowser::FoundWorld &world);
    void worldLost(const QString &rootId);

private:
    struct Entry
    {
        FoundWorld world;
        // When each channel's announcement runs out (ms on m_clock); -1: not held.
        std::array<qint64, 2> expires{-1, -1};
    };

    void handleAnnouncement(const WorldAnnouncement &announcement);
    void withdraw(const QString &rootId, FoundBy channel);
    void refresh(Entry &entry, const WorldAnnouncement &announcement, FoundBy channel);
    void expire();
    qsizetype indexOf(const QString &rootId) const;

    Transport *m_transport = nullptr;
    QString m_transportName;
    QVariantMap m_options;
    QList<Entry> m_entries;
    QElapsedTimer m_clock;
    QTimer m_expiry;
};

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::WorldBrowser::FoundWorld)
