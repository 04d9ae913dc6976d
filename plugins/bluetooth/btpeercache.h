// BtPeerCache: the device addresses of the nodes a world was formed with,
// kept in a small JSON file so that the next formation of the same group
// asks them directly and skips the ~10 s inquiry. Untrusted on reading: a
// malformed or oversized file is ignored.
#pragma once

#include <QList>
#include <QString>

namespace mmpi {

class BtPeerCache
{
public:
    // Empty path: nothing is read or written.
    explicit BtPeerCache(QString path) : m_path(std::move(path)) {}

    static QString defaultPath();
    QList<quint64> devices(const QString &worldName) const;
    // Puts `device` first for the world; keeps at most MaxPerWorld.
    bool remember(const QString &worldName, quint64 device);

    static constexpr int MaxPerWorld = 32;
    static constexpr int MaxWorlds = 16;
    static constexpr qint64 MaxFileBytes = 64 * 1024;

private:
    QString m_path;
};

} // namespace mmpi
