#include "gamesession.h"

#include <mmpi/world/world.h>

#include <QLoggingCategory>

namespace mmpi::game {

namespace {

Q_LOGGING_CATEGORY(lcGame, "mmpi.demo.game")

// How many applied bundles each device keeps for a new root to resend.
constexpr qsizetype HistoryLength = 1024;
// Bundles that came before their turn; more means a broken root.
constexpr qsizetype MaxPending = 4096;

bool isAway(World *world, int rank)
{
    const auto quality = world->linkQuality(rank);
    return quality && (quality->status == World::NodeStatus::Unreachable
                       || quality->status == World::NodeStatus::Suspect);
}

} // namespace

GameSession::GameSession(World *world, FaultTolerance *ft, Options options, QObject *parent)
    : QObject(parent), m_world(world), m_ft(ft), m_options(options), m_comm(ft->communicator())
{
    m_player = m_comm.worldRank(m_comm.rank());
    m_timer.setInterval(m_options.tickInterval);
    connect(&m_timer, &QTimer::timeout, this, &GameSession::rootTick);
    connect(ft, &FaultTolerance::worldReconfigured, this, &GameSession::handleReconfigured);
}

GameSession::~GameSession() = default;

void GameSession::start()
{
    listen();
    if (isRoot())
        m_timer.start();
}

void GameSession::listen()
{
    m_inbox = std::make_unique<MessageListener>(m_comm, this, QStringLiteral("game"),
                                                [this](const Status &status, const Request &request) {
        if (const auto items = request.value<QList<qint64>>())
            handleMessage(status.source, status.tag, *items);
    });
}

void GameSession::setHeading(Heading heading)
{
    m_wish = heading;
    m_steered = true;
    sendWish();
}

void GameSession::sendWish()
{
    if (isRoot()) {
        m_wishes.insert(m_player, m_wish);
        return;
    }
    m_comm.isend(0, WishTag, QList<qint64>{m_state.tick(), qint64(m_wish)});
}

void GameSession::handleMessage(int source, int tag, const QList<qint64> &items)
{
    if (tag == WishTag && isRoot() && items.size() == 2 && items.at(1) >= 0 && items.at(1) <= 3) {
        m_wishes.insert(m_comm.worldRank(source), Heading(items.at(1)));
        return;
    }
    if (tag == BundleTag && source == 0) {
        if (const auto bundle = TickBundle::decode(items))
            return receiveBundle(*bundle);
        qCWarning(lcGame) << "a malformed tick bundle from the root; ignored";
    }
}

TickBundle GameSession::nextBundle() const
{
    TickBundle b;
    b.tick = m_state.tick() + 1;
    b.players = m_comm.group();
    std::sort(b.players.begin(), b.players.end());
    for (int player : std::as_const(b.players))
        if (player != m_player && isAway(m_world, player))
            b.frozen << player;
    for (auto it = m_wishes.cbegin(); it != m_wishes.cend(); ++it)
        if (b.players.contains(it.key()))
            b.headings.append({it.key(), it.value()});
    std::sort(b.headings.begin(), b.headings.end());
    b.last = m_options.lastTick > 0 && b.tick >= m_options.lastTick;
    return b;
}

// A frozen player's messages wait in the replay buffer: they arrive when it
// is back, and nothing is sent twice, so the root just goes on.
void GameSession::rootTick()
{
    if (m_resyncing || m_finished)
        return;
    const TickBundle bundle = nextBundle();
    const QList<qint64> items = bundle.encode();
    for (int rank = 1; rank < m_comm.size(); ++rank)
        m_comm.isend(rank, BundleTag, items);
    applyBundle(bundle);
}

void GameSession::receiveBundle(const TickBundle &bundle)
{
    if (bundle.tick <= m_state.tick())
        return; // resent by a new root after a SHRINK
    if (m_pending.size() >= MaxPending) {
        Q_EMIT failed({ErrorCode::ProtocolViolation, QStringLiteral("the root sent bundles far ahead of tick %1")
                                                         .arg(m_state.tick())});
        return;
    }
    m_pending.insert(bundle.tick, bundle);
    while (!m_pending.isEmpty() && m_pending.firstKey() == m_state.tick() + 1)
        applyBundle(m_pending.take(m_pending.firstKey()));
}

void GameSession::applyBundle(const TickBundle &bundle)
{
    if (m_finished || !m_state.apply(bundle))
        return;
    m_history.insert(bundle.tick, bundle);
    while (m_history.size() > HistoryLength)
        m_history.erase(m_history.begin());
    for (int player : bundle.frozen)
        if (!m_frozen.contains(player))
            Q_EMIT playerFrozen(player, true);
    for (int player : std::as_const(m_frozen))
        if (!bundle.frozen.contains(player))
            Q_EMIT playerFrozen(player, false);
    m_frozen = bundle.frozen;
    Q_EMIT ticked(bundle.tick);
    if (bundle.last) {
        m_finished = true;
        m_timer.stop();
        Q_EMIT finished();
        return;
    }
    if (m_options.bot) {
        const Heading wanted = m_state.botHeading(m_player);
        if (wanted != m_wish || !m_steered) {
            m_wish = wanted;
            m_steered = true;
            sendWish();
        }
    }
}

void GameSession::handleReconfigured(Policy policy, const QList<int> &failed)
{
    if (policy != Policy::Shrink)
        return;
    for (int rank : failed)
        Q_EMIT playerRemoved(m_comm.worldRank(rank));
    m_comm = m_ft->communicator();
    m_timer.stop();
    listen();
    resync();
}

// After a SHRINK the survivors may be a tick or two apart (the old root died
// between its sends): the one that got furthest gives the others what they
// missed, then the new root ticks on from there.
QCoro::Task<void> GameSession::resync()
{
    m_resyncing = true;
    const Communicator comm = m_comm;
    const qint64 mine = m_state.tick();
    const auto newest = co_await comm.allreduce(mine, Op::Max);
    const auto oldest = co_await comm.allreduce(mine, Op::Min);
    const qint64 candidate = newest && mine == *newest ? comm.rank() : comm.size();
    const auto holder = co_await comm.allreduce(candidate, Op::Min);
    if (!newest || !oldest || !holder) {
        m_resyncing = false;
        Q_EMIT failed({ErrorCode::NodeLost, QStringLiteral("the players could not agree on the tick after a loss")});
        co_return;
    }
    QList<qint64> missing;
    if (comm.rank() == *holder) {
        for (qint64 tick = *oldest + 1; tick <= *newest; ++tick) {
            const QList<qint64> items = m_history.value(tick).encode();
            missing << items.size();
            missing << items;
        }
    }
    const int from = int(*holder);
    const auto resent = co_await comm.bcast(missing, from);
    if (resent) {
        for (qsizetype at = 0; at < resent->size();) {
            const qsizetype n = resent->at(at++);
            if (const auto bundle = TickBundle::decode(resent->mid(at, n)))
                receiveBundle(*bundle);
            at += n;
        }
    }
    m_resyncing = false;
    qCInfo(lcGame) << "resynchronised at tick" << m_state.tick() << "with" << comm.size() << "player(s)";
    if (isRoot() && !m_finished)
        m_timer.start();
    else if (!isRoot())
        sendWish();
}

} // namespace mmpi::game
