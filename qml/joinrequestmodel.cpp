#include "joinrequestmodel.h"

#include <algorithm>

namespace mmpi {

JoinRequestModel::JoinRequestModel(QObject *parent) : QAbstractListModel(parent) {}

int JoinRequestModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_requests.size());
}

QVariant JoinRequestModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_requests.size())
        return {};
    const Request &request = m_requests.at(index.row());
    switch (role) {
    case RequestIdRole: return request.requestId;
    case NodeIdRole: return request.nodeId;
    case AddressRole: return request.address;
    case VerificationCodeRole: return request.verificationCode;
    default: return {};
    }
}

QHash<int, QByteArray> JoinRequestModel::roleNames() const
{
    return {{RequestIdRole, "requestId"},
            {NodeIdRole, "nodeId"},
            {AddressRole, "address"},
            {VerificationCodeRole, "verificationCode"}};
}

void JoinRequestModel::add(int requestId, const QString &nodeId, const QString &address,
                           const QString &verificationCode)
{
    const int row = int(m_requests.size());
    beginInsertRows({}, row, row);
    m_requests.append({requestId, nodeId, address, verificationCode});
    endInsertRows();
    Q_EMIT countChanged();
}

void JoinRequestModel::remove(int requestId)
{
    const auto found = std::find_if(m_requests.begin(), m_requests.end(),
                                    [requestId](const Request &r) { return r.requestId == requestId; });
    if (found == m_requests.end())
        return;
    const int row = int(found - m_requests.begin());
    beginRemoveRows({}, row, row);
    m_requests.removeAt(row);
    endRemoveRows();
    Q_EMIT countChanged();
}

void JoinRequestModel::clear()
{
    if (m_requests.isEmpty())
        return;
    beginResetModel();
    m_requests.clear();
    endResetModel();
    Q_EMIT countChanged();
}

QVariantMap JoinRequestModel::get(int row) const
{
    if (row < 0 || row >= m_requests.size())
        return {};
    const Request &request = m_requests.at(row);
    return {{QStringLiteral("requestId"), request.requestId},
            {QStringLiteral("nodeId"), request.nodeId},
            {QStringLiteral("address"), request.address},
            {QStringLiteral("verificationCode"), request.verificationCode}};
}

} // namespace mmpi
