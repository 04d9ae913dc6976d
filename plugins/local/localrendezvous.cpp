#include "localrendezvous.h"

#include "localaddress.h"

#include <mmpi/core/logging.h>

#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QSaveFile>
#include <QStandardPaths>

namespace mmpi {

namespace {

constexpr int AdvertVersion = 1;
constexpr qint64 MaxAdvertFileSize = 4096;
// File names are limited to 255 bytes; leave room for ".json" and QSaveFile's
// temporary suffix.
constexpr int MaxComponentLength = 200;

Error discoveryError(const QString &message)
{
    return Error(ErrorCode::DiscoveryFailed, message);
}

QByteArray advertJson(const PeerAdvert &advert)
{
    const QJsonObject object{{QStringLiteral("version"), AdvertVersion},
                             {QStringLiteral("worldName"), advert.worldName},
                             {QStringLiteral("nodeId"), advert.nodeId},
                             {QStringLiteral("address"), advert.address},
                             {QStringLiteral("pid"), QCoreApplication::applicationPid()}};
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// A node that crashed leaves its advert behind; where /proc tells, such an
// advert is skipped instead of being tried again and again.
bool processIsGone(qint64 pid)
{
    return pid > 0 && QFileInfo::exists(QStringLiteral("/proc/self"))
        && !QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid));
}

} // namespace

LocalRendezvous::LocalRendezvous(QObject *parent)
    : QObject(parent), m_pollTimer(this)
{
    m_pollTimer.setInterval(200);
    connect(&m_pollTimer, &QTimer::timeout, this, &LocalRendezvous::poll);
}

LocalRendezvous::~LocalRendezvous()
{
    stopAdvertising();
}

QString LocalRendezvous::defaultDirectory()
{
    QString base = QStandardPaths::writableLocation(QStandardPaths::RuntimeLocation);
    if (base.isEmpty())
        base = QDir::tempPath();
    return base + QStringLiteral("/mmpi-discovery");
}

Result<QString> LocalRendezvous::pathComponent(const QString &name)
{
    // '.' and '~' are unreserved in URLs but must not survive here: '.' would
    // allow "." and "..".
    const QString encoded = QString::fromLatin1(name.toUtf8().toPercentEncoding(QByteArray(), ".~"));
    if (encoded.isEmpty() || encoded.size() > MaxComponentLength)
        return discoveryError(QStringLiteral("'%1' cannot be used for discovery: it must be 1 to %2 "
                                             "bytes once encoded for a file name")
                                  .arg(name).arg(MaxComponentLength));
    return encoded;
}

QString LocalRendezvous::directory() const
{
    return m_directory.isEmpty() ? defaultDirectory() : m_directory;
}

Result<QString> LocalRendezvous::worldDirectory(const QString &worldName) const
{
    auto component = pathComponent(worldName);
    if (!component)
        return component.error();
    return directory() + u'/' + *component;
}

Result<void> LocalRendezvous::advertise(const PeerAdvert &advert)
{
    auto worldDir = worldDirectory(advert.worldName);
    if (!worldDir)
        return worldDir.error();
    auto fileName = pathComponent(advert.nodeId);
    if (!fileName)
        return fileName.error();
    if (!QDir().mkpath(*worldDir))
        return discoveryError(QStringLiteral("cannot create the discovery directory %1").arg(*worldDir));
    const QString path = *worldDir + u'/' + *fileName + QStringLiteral(".json");
    // Atomic: a discoverer never reads half an advert.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(advertJson(advert)) < 0 || !file.commit())
        return discoveryError(QStringLiteral("cannot write the advert %1: %2").arg(path, file.errorString()));
    if (m_advertPath != path)
        stopAdvertising();
    m_advertPath = path;
    qCDebug(lcTransport).noquote() << "advertising" << advert.nodeId << "in" << path;
    return success();
}

void LocalRendezvous::stopAdvertising()
{
    if (m_advertPath.isEmpty())
        return;
    if (!QFile::remove(m_advertPath) && QFile::exists(m_advertPath))
        qCWarning(lcTransport).noquote() << "cannot remove the advert" << m_advertPath;
    m_advertPath.clear();
}

Result<void> LocalRendezvous::startDiscovery(const QString &worldName)
{
    auto worldDir = worldDirectory(worldName);
    if (!worldDir)
        return worldDir.error();
    m_worldName = worldName;
    m_worldDir = *worldDir;
    m_lastCounts = {-1, -1};
    m_pollTimer.start();
    // The first look is not an interval away, but still after the caller's
    // own set-up, like every later report.
    QTimer::singleShot(0, this, [this] {
        if (m_pollTimer.isActive())
            poll();
    });
    return success();
}

void LocalRendezvous::stopDiscovery()
{
    m_pollTimer.stop();
    m_worldName.clear();
    m_worldDir.clear();
}

void LocalRendezvous::poll()
{
    QPointer<LocalRendezvous> self(this);
    const QString worldDir = m_worldDir;
    const QFileInfoList files =
        QDir(worldDir).entryInfoList({QStringLiteral("*.json")}, QDir::Files | QDir::Readable, QDir::Name);
    QList<PeerAdvert> adverts;
    for (const QFileInfo &file : files) {
        auto advert = readAdvert(file);
        if (advert)
            adverts.append(*advert);
        else
            qCDebug(lcTransport).noquote() << "ignoring" << file.filePath() << ":" << advert.error().message;
    }
    if (const std::pair counts{int(files.size()), int(adverts.size())}; counts != m_lastCounts) {
        m_lastCounts = counts;
        Q_EMIT discoveryProgress(counts.first, counts.second, -1);
        if (!self || m_worldDir != worldDir)
            return;
    }
    for (const PeerAdvert &advert : std::as_const(adverts)) {
        Q_EMIT peerDiscovered(advert);
        // A slot may have stopped discovery, or started another.
        if (!self || m_worldDir != worldDir)
            return;
    }
}

Result<PeerAdvert> LocalRendezvous::readAdvert(const QFileInfo &info) const
{
    if (info.size() > MaxAdvertFileSize)
        return discoveryError(QStringLiteral("larger than %1 bytes").arg(MaxAdvertFileSize));
    QFile file(info.filePath());
    if (!file.open(QIODevice::ReadOnly))
        return discoveryError(file.errorString());
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(file.read(MaxAdvertFileSize), &parseError);
    if (!document.isObject())
        return discoveryError(QStringLiteral("not a JSON object (%1)").arg(parseError.errorString()));
    return checkAdvert(document.object(), info.fileName());
}

Result<PeerAdvert> LocalRendezvous::checkAdvert(const QJsonObject &object, const QString &fileName) const
{
    if (object.value(QStringLiteral("version")).toInt() != AdvertVersion)
        return discoveryError(QStringLiteral("not a version %1 advert").arg(AdvertVersion));
    const PeerAdvert advert{object.value(QStringLiteral("worldName")).toString(),
                            object.value(QStringLiteral("nodeId")).toString(),
                            object.value(QStringLiteral("address")).toString(), {}};
    if (advert.worldName != m_worldName)
        return discoveryError(QStringLiteral("the advert is for world '%1'").arg(advert.worldName));
    if (auto name = pathComponent(advert.nodeId); !name || *name + QStringLiteral(".json") != fileName)
        return discoveryError(QStringLiteral("the node id '%1' does not match the file name").arg(advert.nodeId));
    if (auto address = parseLocalAddress(advert.address); !address)
        return address.error();
    if (processIsGone(object.value(QStringLiteral("pid")).toInteger()))
        return discoveryError(QStringLiteral("the advertising process has ended"));
    return advert;
}

} // namespace mmpi
