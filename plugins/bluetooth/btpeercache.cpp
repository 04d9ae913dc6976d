#include "btpeercache.h"

#include "btaddress.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

namespace mmpi {

namespace {

QJsonObject readWorlds(const QString &path)
{
    QFile file(path);
    if (path.isEmpty() || file.size() > BtPeerCache::MaxFileBytes || !file.open(QIODevice::ReadOnly))
        return {};
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(BtPeerCache::MaxFileBytes));
    return doc.object().value(QStringLiteral("worlds")).toObject();
}

} // namespace

QString BtPeerCache::defaultPath()
{
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation);
    return dir.isEmpty() ? QString() : dir + QStringLiteral("/mmpi/bluetooth-peers.json");
}

QList<quint64> BtPeerCache::devices(const QString &worldName) const
{
    QList<quint64> result;
    const QJsonArray list = readWorlds(m_path).value(worldName).toArray();
    for (const QJsonValue &value : list) {
        auto device = parseBtDevice(value.toString());
        if (device && !result.contains(*device) && result.size() < MaxPerWorld)
            result << *device;
    }
    return result;
}

bool BtPeerCache::remember(const QString &worldName, quint64 device)
{
    if (m_path.isEmpty())
        return false;
    QJsonObject worlds = readWorlds(m_path);
    QList<quint64> list = devices(worldName);
    list.removeAll(device);
    list.prepend(device);
    QJsonArray array;
    for (quint64 d : list.mid(0, MaxPerWorld))
        array << formatBtDevice(d);
    worlds.insert(worldName, array);
    while (worlds.size() > MaxWorlds)
        worlds.remove(worlds.keys().constFirst() == worldName ? worlds.keys().constLast() : worlds.keys().constFirst());
    QDir().mkpath(QFileInfo(m_path).absolutePath());
    QSaveFile file(m_path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1}, {QStringLiteral("worlds"), worlds}})
                   .toJson(QJsonDocument::Compact));
    return file.commit();
}

} // namespace mmpi
