#include "scoremodel.h"

#include "gameboard.h"

namespace mmpi::game {

ScoreModel::ScoreModel(QObject *parent) : QAbstractListModel(parent) {}

int ScoreModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant ScoreModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const Row &r = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return QStringLiteral("Player %1").arg(r.player);
    case PlayerRole:
        return r.player;
    case ColorRole:
        return GameBoard::playerColor(r.player);
    case ScoreRole:
        return r.score;
    case StatusRole:
        return QVariant::fromValue(r.status);
    case StatusNameRole:
        return statusName(r.status);
    case AliveRole:
        return r.alive;
    case SelfRole:
        return r.player == m_localPlayer;
    default:
        return {};
    }
}

QHash<int, QByteArray> ScoreModel::roleNames() const
{
    return {{PlayerRole, "player"}, {NameRole, "name"},     {ColorRole, "color"},
            {ScoreRole, "score"},   {StatusRole, "status"}, {StatusNameRole, "statusName"},
            {AliveRole, "alive"},   {SelfRole, "self"}};
}

QString ScoreModel::statusName(Status status)
{
    switch (status) {
    case Status::Joined:
        return QStringLiteral("joined");
    case Status::Frozen:
        return QStringLiteral("frozen");
    case Status::Removed:
        return QStringLiteral("removed");
    }
    return {};
}

void ScoreModel::setLocalPlayer(int player)
{
    m_localPlayer = player;
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0), index(int(m_rows.size()) - 1), {SelfRole});
}

qsizetype ScoreModel::rowOf(int player) const
{
    for (qsizetype i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).player == player)
            return i;
    return -1;
}

void ScoreModel::setRow(qsizetype at, const Row &row)
{
    const Row &old = m_rows.at(at);
    if (old.score == row.score && old.status == row.status && old.alive == row.alive)
        return;
    m_rows[at] = row;
    Q_EMIT dataChanged(index(int(at)), index(int(at)));
}

void ScoreModel::update(const LightCycles &state)
{
    for (const Cycle &c : state.cycles()) {
        const Row row{c.player, c.score, c.frozen ? Status::Frozen : Status::Joined, c.alive};
        const qsizetype at = rowOf(c.player);
        if (at >= 0) {
            setRow(at, row);
            continue;
        }
        // Keep the rows sorted by player.
        qsizetype pos = 0;
        while (pos < m_rows.size() && m_rows.at(pos).player < c.player)
            ++pos;
        beginInsertRows({}, int(pos), int(pos));
        m_rows.insert(pos, row);
        endInsertRows();
        Q_EMIT countChanged();
    }
    if (state.round() == 0)
        return; // no players yet: nobody was removed
    QList<int> gone;
    for (const Row &r : std::as_const(m_rows)) {
        const bool inGame = std::any_of(state.cycles().begin(), state.cycles().end(),
                                        [&r](const Cycle &c) { return c.player == r.player; });
        if (!inGame && r.status != Status::Removed)
            gone << r.player;
    }
    for (int player : gone)
        markRemoved(player);
}

void ScoreModel::markRemoved(int player)
{
    const qsizetype at = rowOf(player);
    if (at < 0)
        return;
    Row row = m_rows.at(at);
    row.status = Status::Removed;
    row.alive = false;
    setRow(at, row);
}

QVariantMap ScoreModel::get(int player) const
{
    const qsizetype at = rowOf(player);
    if (at < 0)
        return {};
    const auto roles = roleNames();
    QVariantMap map;
    for (auto it = roles.cbegin(); it != roles.cend(); ++it)
        map.insert(QString::fromLatin1(it.value()), data(index(int(at)), it.key()));
    return map;
}

} // namespace mmpi::game
