// LocalRendezvous: discovery for the local transport. Nodes on one machine meet
// in a directory: an advertiser keeps <dir>/<world>/<node id>.json there (written
// atomically), a discoverer polls its world's directory. Advert files are
// untrusted input: anything malformed is skipped with a debug log.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/transport/transport.h>

#include <QFileInfo>
#include <QJsonObject>
#include <QTimer>

namespace mmpi {

class LocalRendezvous : public QObject
{
    Q_OBJECT
public:
    explicit LocalRendezvous(QObject *parent = nullptr);
    ~LocalRendezvous() override; // removes our advert

    // <runtime dir>/mmpi-discovery (XDG_RUNTIME_DIR on Linux), or
    // <temp dir>/mmpi-discovery where there is no runtime directory.
    static QString defaultDirectory();
    // `name` as one safe path component: UTF-8, percent-encoded except for
    // letters, digits, '-' and '_' (so no '/', '.' or '..'). DiscoveryFailed
    // if it is empty or too long for a file name.
    static Result<QString> pathComponent(const QString &name);

    // Empty: defaultDirectory(). Takes effect at the next advertise() or
    // startDiscovery().
    void setDirectory(const QString &directory) { m_directory = directory; }
    void setPollInterval(int ms) { m_pollTimer.setInterval(ms); }

    Result<void> advertise(const PeerAdvert &advert);
    void stopAdvertising();
    Result<void> startDiscovery(const QString &worldName);
    void stopDiscovery();

Q_SIGNALS:
    void peerDiscovered(const mmpi::PeerAdvert &advert);
    // When the counts change: advert files seen, valid adverts of the world.
    void discoveryProgress(int devicesSeen, int nodesFound, int secondsLeft);

private:
    QString directory() const;
    Result<QString> worldDirectory(const QString &worldName) const;
    void poll();
    Result<PeerAdvert> readAdvert(const QFileInfo &file) const;
    Result<PeerAdvert> checkAdvert(const QJsonObject &object, const QString &fileName) const;

    QString m_directory;
    QString m_advertPath;  // our advert file, empty if not advertising
    QString m_worldName;   // world being discovered, empty if not discovering
    QString m_worldDir;
    QTimer m_pollTimer;
    std::pair<int, int> m_lastCounts{-1, -1};
};

} // namespace mmpi
