#include "nodelistmodel.h"

#include <mmpi/world/world.h>

#include <QMetaEnum>

namespace mmpi {

namespace {

NodeListModel::Status fromWorld(World::NodeStatus s)
{
    switch (s) {
    case World::NodeStatus::Alive: return NodeListModel::Status::Joined;
    case World::NodeStatus::Suspect: return NodeListModel::Status::Suspect;
    case World::NodeStatus::Unreachable: return NodeListModel::Status::Unreachable;
    case World::NodeStatus::Left: return NodeListModel::Status::Left;
    case World::NodeStatus::Lost: return NodeListModel::Status::Lost;
    }
    return NodeListModel::Status::Lost;
}

} // namespace

NodeListModel::NodeListModel(QObject *parent) : QAbstractListModel(parent)
{
    m_timer.setInterval(1000);
    connect(&m_timer, &QTimer::timeout, this, &NodeListModel::refreshAll);
}

int NodeListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant NodeListModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const Row &row = m_rows.at(index.row());
    switch (role) {
    case RankRole: return row.rank;
    case NodeIdRole: return row.nodeId;
    case AddressRole: return row.address;
    case StatusRole: return QVariant::fromValue(row.status);
    case RoundTripRole: return row.roundTripMs;
    case LastHeardRole: return row.lastHeardMs;
    case SelfRole: return row.self;
    case VerificationCodeRole: return row.verificationCode;
    default: return {};
    }
}

QHash<int, QByteArray> NodeListModel::roleNames() const
{
    return {{RankRole, "rank"},           {NodeIdRole, "nodeId"},       {AddressRole, "address"},
            {StatusRole, "status"},       {RoundTripRole, "roundTrip"}, {LastHeardRole, "lastHeard"},
            {SelfRole, "self"},           {VerificationCodeRole, "verificationCode"}};
}

void NodeListModel::setRefreshInterval(int ms)
{
    if (ms == refreshInterval())
        return;
    if (ms > 0) {
        m_timer.setInterval(ms);
        if (!m_rows.isEmpty())
            m_timer.start();
    } else {
        m_timer.stop();
    }
    Q_EMIT refreshIntervalChanged();
}

void NodeListModel::reset(World *world)
{
    const int interval = m_timer.interval();
    beginResetModel();
    m_world = world;
    m_rows.clear();
    if (world)
        for (int r = 0; r < world->size(); ++r)
            m_rows.append(read(r));
    endResetModel();
    Q_EMIT countChanged();
    if (world && interval > 0)
        m_timer.start(interval);
}

NodeListModel::Row NodeListModel::read(int rank) const
{
    Row row;
    row.rank = rank;
    const QList<NodeInfo> nodes = m_world->nodes();
    if (rank < nodes.size()) {
        row.nodeId = nodes.at(rank).nodeId;
        row.address = nodes.at(rank).address;
    }
    if (rank == m_world->rank()) {
        row.self = true;
        row.roundTripMs = 0;
        return row;
    }
    if (const auto code = m_world->verificationCode(rank))
        row.verificationCode = *code;
    if (const auto q = m_world->linkQuality(rank); q) {
        row.status = fromWorld(q->status);
        row.roundTripMs = q->smoothedRoundTrip.count() < 0 ? -1.0 : q->smoothedRoundTrip.count() / 1000.0;
        row.lastHeardMs = q->sinceHeard.count();
    } else {
        // No link any more: the world has forgotten the peer.
        row.status = Status::Lost;
    }
    return row;
}

void NodeListModel::refresh(int rank)
{
    if (!m_world || rank < 0 || rank >= m_rows.size())
        return;
    const Row fresh = read(rank);
    Row &row = m_rows[rank];
    // A lost or departed node stays so, whatever a late link event says.
    if (row.status == Status::Lost || row.status == Status::Left)
        return;
    QList<int> changed;
    if (fresh.status != row.status)
        changed << StatusRole;
    if (fresh.roundTripMs != row.roundTripMs)
        changed << RoundTripRole;
    if (fresh.lastHeardMs != row.lastHeardMs)
        changed << LastHeardRole;
    if (fresh.verificationCode != row.verificationCode)
        changed << VerificationCodeRole;
    row = fresh;
    if (!changed.isEmpty())
        Q_EMIT dataChanged(index(rank), index(rank), changed);
}

void NodeListModel::markGone(int rank, Status status)
{
    if (rank < 0 || rank >= m_rows.size() || m_rows.at(rank).status == status)
        return;
    m_rows[rank].status = status;
    Q_EMIT dataChanged(index(rank), index(rank), {StatusRole});
}

void NodeListModel::replaceNode(int rank)
{
    if (!m_world || rank < 0 || rank >= m_rows.size())
        return;
    m_rows[rank] = read(rank);
    Q_EMIT dataChanged(index(rank), index(rank));
}

void NodeListModel::refreshAll()
{
    for (int r = 0; r < m_rows.size(); ++r)
        refresh(r);
}

NodeListModel::Status NodeListModel::status(int rank) const
{
    return rank >= 0 && rank < m_rows.size() ? m_rows.at(rank).status : Status::Lost;
}

bool NodeListModel::isGone(int rank) const
{
    const Status s = status(rank);
    return s == Status::Left || s == Status::Lost;
}

QString NodeListModel::statusName(int rank) const
{
    return QString::fromLatin1(QMetaEnum::fromType<Status>().valueToKey(int(status(rank))));
}

QVariantMap NodeListModel::get(int rank) const
{
    if (rank < 0 || rank >= m_rows.size())
        return {};
    const Row &row = m_rows.at(rank);
    return {{QStringLiteral("rank"), row.rank},
            {QStringLiteral("nodeId"), row.nodeId},
            {QStringLiteral("address"), row.address},
            {QStringLiteral("status"), int(row.status)},
            {QStringLiteral("statusName"), statusName(rank)},
            {QStringLiteral("roundTrip"), row.roundTripMs},
            {QStringLiteral("lastHeard"), row.lastHeardMs},
            {QStringLiteral("self"), row.self},
            {QStringLiteral("verificationCode"), row.verificationCode}};
}

} // namespace mmpi
