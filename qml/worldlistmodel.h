// WorldList: the worlds a WorldBrowser hears nearby, one row each (name,
// host, joined, wanted, foundBy), following it as worlds come, change and
// go; Lobby.foundWorlds is one, for a view where a person picks a world.
#pragma once

#include <mmpi/world/worldbrowser.h>

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

namespace mmpi {

class WorldListModel : public QAbstractListModel
{
    Q_OBJECT
    QML_NAMED_ELEMENT(WorldList)
    QML_UNCREATABLE("WorldList is Lobby.foundWorlds")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role { NameRole = Qt::UserRole + 1, HostRole, JoinedRole, WantedRole, FoundByRole, RootIdRole, AddressesRole };

    explicit WorldListModel(WorldBrowser *browser, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Row `row` as an object of the roles' names; {} out of range.
    Q_INVOKABLE QVariantMap get(int row) const;
    // The root id of row `row`, "" out of range.
    QString rootIdAt(int row) const;

Q_SIGNALS:
    void countChanged();

private:
    void add(const WorldBrowser::FoundWorld &world);
    void update(const WorldBrowser::FoundWorld &world);
    void remove(const QString &rootId);
    int rowOf(const QString &rootId) const;
    QVariant roleValue(const WorldBrowser::FoundWorld &world, int role) const;

    QList<WorldBrowser::FoundWorld> m_worlds;
};

} // namespace mmpi
