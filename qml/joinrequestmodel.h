// JoinRequestList: the join requests a root that confirms joins has open
// (World::joinRequested until joinRequestEnded), one row each, for a view
// where a person compares the verification code with the joining device's.
// Lobby.pendingJoins is one.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

namespace mmpi {

class JoinRequestModel : public QAbstractListModel
{
    Q_OBJECT
    QML_NAMED_ELEMENT(JoinRequestList)
    QML_UNCREATABLE("JoinRequestList is Lobby.pendingJoins")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role { RequestIdRole = Qt::UserRole + 1, NodeIdRole, AddressRole, VerificationCodeRole };

    explicit JoinRequestModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void add(int requestId, const QString &nodeId, const QString &address, const QString &verificationCode);
    void remove(int requestId);
    void clear();

    // Row `row` as an object {requestId, nodeId, address, verificationCode}.
    Q_INVOKABLE QVariantMap get(int row) const;

Q_SIGNALS:
    void countChanged();

private:
    struct Request
    {
        int requestId = 0;
        QString nodeId;
        QString address;
        QString verificationCode;
    };
    QList<Request> m_requests;
};

} // namespace mmpi
