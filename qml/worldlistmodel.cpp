#include "worldlistmodel.h"

#include <QMetaEnum>

namespace mmpi {

WorldListModel::WorldListModel(WorldBrowser *browser, QObject *parent) : QAbstractListModel(parent)
{
    connect(browser, &WorldBrowser::worldFound, this, &WorldListModel::add);
    connect(browser, &WorldBrowser::worldUpdated, this, &WorldListModel::update);
    connect(browser, &WorldBrowser::worldLost, this, &WorldListModel::remove);
}

int WorldListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_worlds.size());
}

QVariant WorldListModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_worlds.size())
        return {};
    return roleValue(m_worlds.at(index.row()), role);
}

QVariant WorldListModel::roleValue(const WorldBrowser::FoundWorld &world, int role) const
{
    switch (role) {
    case NameRole: return world.name;
    case HostRole: return world.host;
    case JoinedRole: return world.joined;
    case WantedRole: return world.wanted;
    case FoundByRole:
        return QString::fromLatin1(QMetaEnum::fromType<WorldBrowser::FoundBy>().valueToKey(int(world.foundBy)));
    case RootIdRole: return world.rootId;
    case AddressesRole: return world.addresses;
    default: return {};
    }
}

QHash<int, QByteArray> WorldListModel::roleNames() const
{
    return {{NameRole, "name"},       {HostRole, "host"},     {JoinedRole, "joined"},      {WantedRole, "wanted"},
            {FoundByRole, "foundBy"}, {RootIdRole, "rootId"}, {AddressesRole, "addresses"}};
}

QVariantMap WorldListModel::get(int row) const
{
    if (row < 0 || row >= m_worlds.size())
        return {};
    QVariantMap out;
    const QHash<int, QByteArray> roles = roleNames();
    for (auto it = roles.begin(); it != roles.end(); ++it)
        out.insert(QString::fromLatin1(it.value()), roleValue(m_worlds.at(row), it.key()));
    return out;
}

QString WorldListModel::rootIdAt(int row) const
{
    return row >= 0 && row < m_worlds.size() ? m_worlds.at(row).rootId : QString();
}

int WorldListModel::rowOf(const QString &rootId) const
{
    for (int row = 0; row < m_worlds.size(); ++row)
        if (m_worlds.at(row).rootId == rootId)
            return row;
    return -1;
}

void WorldListModel::add(const WorldBrowser::FoundWorld &world)
{
    const int row = int(m_worlds.size());
    beginInsertRows({}, row, row);
    m_worlds.append(world);
    endInsertRows();
    Q_EMIT countChanged();
}

void WorldListModel::update(const WorldBrowser::FoundWorld &world)
{
    const int row = rowOf(world.rootId);
    if (row < 0)
        return add(world);
    m_worlds[row] = world;
    Q_EMIT dataChanged(index(row), index(row));
}

void WorldListModel::remove(const QString &rootId)
{
    const int row = rowOf(rootId);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    m_worlds.removeAt(row);
    endRemoveRows();
    Q_EMIT countChanged();
}

} // namespace mmpi
