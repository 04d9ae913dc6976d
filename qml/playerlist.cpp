#include "playerlist.h"

#include "qmllogging.h"
#include "nodelistmodel.h"
#include "qmlworld.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaEnum>

namespace mmpi {

namespace {

constexpr int MaxNameLength = 64;

} // namespace

PlayerList::PlayerList(QObject *parent) : QAbstractListModel(parent) {}

PlayerList::~PlayerList()
{
    detach();
}

int PlayerList::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_players.size());
}

QVariant PlayerList::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_players.size())
        return {};
    const Player &p = m_players.at(index.row());
    switch (role) {
    case RankRole: return p.rank;
    case NameRole: return p.name;
    case ColorRole: return p.color;
    case StatusRole: return QVariant::fromValue(p.status);
    case SelfRole: return p.self;
    default: return {};
    }
}

QHash<int, QByteArray> PlayerList::roleNames() const
{
    return {{RankRole, "rank"}, {NameRole, "name"}, {ColorRole, "color"}, {StatusRole, "status"}, {SelfRole, "self"}};
}

QColor PlayerList::defaultColor(int rank)
{
    // Hues far apart for the first few players, then between them.
    static const int hues[] = {0, 120, 240, 60, 180, 300, 30, 210, 90, 270, 150, 330};
    const int n = int(std::size(hues));
    return QColor::fromHsv(hues[qAbs(rank) % n], 200, 220 - 40 * ((qAbs(rank) / n) % 3));
}

void PlayerList::setWorld(QmlWorld *world)
{
    if (m_world == world)
        return;
    detach();
    m_world = world;
    if (world) {
        connect(world, &QmlWorld::formed, this, &PlayerList::populate);
        connect(world, &QmlWorld::detaching, this, &PlayerList::detach);
        connect(world, &QmlWorld::nodeSuspect, this, [this](int r) { setStatus(r, Status::Suspect); });
        connect(world, &QmlWorld::nodeUnreachable, this, [this](int r) { setStatus(r, Status::Suspect); });
        connect(world, &QmlWorld::nodeAlive, this, [this](int r) { setStatus(r, Status::Joined); });
        connect(world, &QmlWorld::nodeReturned, this, [this](int r) { setStatus(r, Status::Joined); });
        connect(world, &QmlWorld::nodeLeft, this, [this](int r) { setStatus(r, Status::Lost); });
        connect(world, &QmlWorld::nodeLost, this, [this](int r) { setStatus(r, Status::Lost); });
        if (world->state() == QmlWorld::State::Formed)
            populate();
    }
    Q_EMIT worldChanged();
}

void PlayerList::setLocalName(const QString &name)
{
    if (m_localName == name)
        return;
    m_localName = name;
    Q_EMIT localChanged();
}

void PlayerList::setLocalColor(const QColor &color)
{
    if (m_localColor == color)
        return;
    m_localColor = color;
    Q_EMIT localChanged();
}

int PlayerList::active() const
{
    return int(std::count_if(m_players.begin(), m_players.end(), [](const Player &p) { return p.status != Status::Lost; }));
}

void PlayerList::detach()
{
    if (m_world && !m_comm.isNull())
        m_world->releaseChannel(QmlWorld::PlayerChannel, this);
    m_comm = Communicator();
    if (m_world)
        disconnect(m_world, nullptr, this, nullptr);
}

// Every rank gets a row at once (the world has them all); names follow.
void PlayerList::populate()
{
    if (!m_world || !m_players.isEmpty())
        return;
    beginResetModel();
    const int me = m_world->rank();
    for (int r = 0; r < m_world->size(); ++r) {
        Player p;
        p.rank = r;
        p.self = r == me;
        p.name = QStringLiteral("Player %1").arg(r + 1);
        p.color = defaultColor(r);
        const auto status = m_world->nodes()->status(r);
        if (status == NodeListModel::Status::Lost || status == NodeListModel::Status::Left)
            p.status = Status::Lost;
        else if (status != NodeListModel::Status::Joined)
            p.status = Status::Suspect;
        m_players.append(p);
    }
    endResetModel();
    Q_EMIT countChanged();
    Q_EMIT activeChanged();
    announce();
}

void PlayerList::announce()
{
    auto comm = m_world->channel(QmlWorld::PlayerChannel, this);
    if (!comm) {
        m_error = comm.error().message;
        Q_EMIT errorStringChanged();
        qCWarning(lcQml).noquote() << "PlayerList:" << comm.error().toString();
        return;
    }
    m_comm = *comm;
    QJsonObject mine;
    mine.insert(QStringLiteral("name"), m_localName.left(MaxNameLength));
    if (m_localColor.isValid() && m_localColor.alpha() > 0)
        mine.insert(QStringLiteral("color"), m_localColor.name(QColor::HexArgb));
    const auto exchange = m_comm.allgather(QJsonDocument(mine).toJson(QJsonDocument::Compact));
    exchange.request().onFinished(this, [this, exchange] {
        const auto all = exchange.wait();
        if (!all) {
            m_error = all.error().message;
            Q_EMIT errorStringChanged();
            qCWarning(lcQml).noquote() << "PlayerList: names not exchanged:" << all.error().toString();
            return;
        }
        applyAnnouncements(*all);
    });
}

// What another device announces is checked, never trusted: a bad entry
// keeps that player's default name and colour.
void PlayerList::applyAnnouncements(const QList<QByteArray> &all)
{
    for (int r = 0; r < all.size() && r < m_players.size(); ++r) {
        const QJsonDocument doc = QJsonDocument::fromJson(all.at(r));
        if (!doc.isObject()) {
            qCWarning(lcQml) << "PlayerList: rank" << r << "announced something that is not a JSON object";
            continue;
        }
        Player &p = m_players[r];
        const QString name = doc.object().value(QStringLiteral("name")).toString().left(MaxNameLength).trimmed();
        if (!name.isEmpty())
            p.name = name;
        const QColor color = QColor::fromString(doc.object().value(QStringLiteral("color")).toString());
        if (color.isValid() && color.alpha() > 0)
            p.color = color;
        Q_EMIT dataChanged(index(r), index(r), {NameRole, ColorRole});
    }
    m_announced = true;
    Q_EMIT announcedChanged();
}

void PlayerList::setStatus(int rank, Status status)
{
    if (rank < 0 || rank >= m_players.size())
        return;
    Player &p = m_players[rank];
    // Lost is final: a node does not come back after the world gave it up.
    if (p.status == status || p.status == Status::Lost)
        return;
    const Status before = p.status;
    p.status = status;
    Q_EMIT dataChanged(index(rank), index(rank), {StatusRole});
    if (status == Status::Lost) {
        Q_EMIT activeChanged();
        Q_EMIT playerLost(rank, p.name);
    } else if (status == Status::Suspect) {
        Q_EMIT playerSuspect(rank);
    } else if (before == Status::Suspect) {
        Q_EMIT playerReturned(rank);
    }
}

QVariantMap PlayerList::get(int rank) const
{
    if (rank < 0 || rank >= m_players.size())
        return {};
    const Player &p = m_players.at(rank);
    return {{QStringLiteral("rank"), p.rank},
            {QStringLiteral("name"), p.name},
            {QStringLiteral("color"), p.color},
            {QStringLiteral("status"), int(p.status)},
            {QStringLiteral("statusName"), QString::fromLatin1(QMetaEnum::fromType<Status>().valueToKey(int(p.status)))},
            {QStringLiteral("self"), p.self}};
}

} // namespace mmpi
