// PlayerList: the players of a game, one per rank of a World — name and
// colour (each device announces its own once the world is formed) and status
// (joined, suspect, lost) following the World's node signals. A list model
// for QML views.
#pragma once

#include <mmpi/comm/communicator.h>

#include <QAbstractListModel>
#include <QColor>
#include "qmlworld.h"

#include <QPointer>
#include <QtQml/qqmlregistration.h>

namespace mmpi {


class PlayerList : public QAbstractListModel
{
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(mmpi::QmlWorld *world READ world WRITE setWorld NOTIFY worldChanged)
    // What this device announces; read when the world forms. A transparent
    // (or unset) colour means the rank's default colour.
    Q_PROPERTY(QString localName READ localName WRITE setLocalName NOTIFY localChanged)
    Q_PROPERTY(QColor localColor READ localColor WRITE setLocalColor NOTIFY localChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    // Players not lost.
    Q_PROPERTY(int active READ active NOTIFY activeChanged)
    // Every player's own name and colour have arrived.
    Q_PROPERTY(bool announced READ announced NOTIFY announcedChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)

public:
    enum class Status { Joined, Suspect, Lost };
    Q_ENUM(Status)
    enum Role { RankRole = Qt::UserRole + 1, NameRole, ColorRole, StatusRole, SelfRole };

    explicit PlayerList(QObject *parent = nullptr);
    ~PlayerList() override;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QmlWorld *world() const { return m_world; }
    void setWorld(QmlWorld *world);
    QString localName() const { return m_localName; }
    void setLocalName(const QString &name);
    QColor localColor() const { return m_localColor; }
    void setLocalColor(const QColor &color);
    int active() const;
    bool announced() const { return m_announced; }
    QString errorString() const { return m_error; }

    // {rank, name, color, status, statusName, self} of player `rank`.
    Q_INVOKABLE QVariantMap get(int rank) const;
    // The colour a rank gets when it announces none.
    Q_INVOKABLE static QColor defaultColor(int rank);

Q_SIGNALS:
    void worldChanged();
    void localChanged();
    void countChanged();
    void activeChanged();
    void announcedChanged();
    void errorStringChanged();
    void playerSuspect(int rank);
    void playerReturned(int rank);
    void playerLost(int rank, const QString &name);

private:
    struct Player
    {
        int rank = 0;
        QString name;
        QColor color;
        Status status = Status::Joined;
        bool self = false;
    };
    void populate();
    void announce();
    void applyAnnouncements(const QList<QByteArray> &all);
    void setStatus(int rank, Status status);
    void detach();

    QPointer<QmlWorld> m_world;
    QString m_localName;
    QColor m_localColor;
    QList<Player> m_players;
    Communicator m_comm;
    bool m_announced = false;
    QString m_error;
};

} // namespace mmpi
