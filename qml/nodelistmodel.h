// NodeList: one row per rank of a formed world, as this device sees it —
// status (joined, suspect, unreachable, left, lost), heartbeat round trip,
// how long ago the node was last heard and the verification code of its link. World.nodes is one; views bind to it.
#pragma once

#include <QAbstractListModel>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

namespace mmpi {

class World;

class NodeListModel : public QAbstractListModel
{
    Q_OBJECT
    QML_NAMED_ELEMENT(NodeList)
    QML_UNCREATABLE("NodeList is World.nodes")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    // How often lastHeard is brought up to date (ms; 0: only on link events).
    Q_PROPERTY(int refreshInterval READ refreshInterval WRITE setRefreshInterval NOTIFY refreshIntervalChanged)
public:
    enum class Status { Joined, Suspect, Unreachable, Left, Lost };
    Q_ENUM(Status)
    enum Role {
        RankRole = Qt::UserRole + 1,
        NodeIdRole,
        AddressRole,
        StatusRole,
        RoundTripRole,
        LastHeardRole,
        SelfRole,
        VerificationCodeRole, // "482 913" for a peer (World::verificationCode), "" for this node
    };

    explicit NodeListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    int refreshInterval() const { return m_timer.isActive() ? m_timer.interval() : 0; }
    void setRefreshInterval(int ms);

    // One row per rank of `world` (formed), or none for nullptr.
    void reset(World *world);
    // Reads rank's link again and signals what changed.
    void refresh(int rank);
    // The world said the node left or was lost: final, whatever its link says.
    void markGone(int rank, Status status);
    // A new node took `rank` (REBUILD): its row is read afresh, gone or not.
    void replaceNode(int rank);
    Status status(int rank) const;
    // Left or lost: not coming back.
    bool isGone(int rank) const;

    // Status as the QML enum's key ("Joined", ...), for logs and tests.
    Q_INVOKABLE QString statusName(int rank) const;
    // The row of `rank` as an object {rank, nodeId, status, roundTrip, lastHeard, self, verificationCode}.
    Q_INVOKABLE QVariantMap get(int rank) const;

Q_SIGNALS:
    void countChanged();
    void refreshIntervalChanged();

private:
    struct Row
    {
        int rank = -1;
        QString nodeId;
        QString address;
        Status status = Status::Joined;
        double roundTripMs = -1;
        qint64 lastHeardMs = 0;
        bool self = false;
        QString verificationCode;
    };
    Row read(int rank) const;
    void refreshAll();

    World *m_world = nullptr;
    QList<Row> m_rows;
    QTimer m_timer;
};

} // namespace mmpi
