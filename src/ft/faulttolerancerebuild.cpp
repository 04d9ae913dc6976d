// REBUILD (docs/guide/fault-tolerance.md#rebuild): the survivors keep the lost
// ranks blank until replacement nodes rejoin the world in their place, then
// switch to a communicator of the same group with a new id (made when they
// agreed on REBUILD, so that the id is taken on every member). Over the
// world's service channel: once every awaited rank has rejoined it, the
// speaker (the lowest survivor) welcomes each replacement; a replacement
// answers Joined once it is linked to every member (the other replacements
// included); when all have, the speaker announces Rebuilt, every member that
// hears it passes it on to all the others (so it reaches everyone even if the
// speaker dies while telling them), and each switches and emits
// ranksRebuilt(). A decision that comes meanwhile (another rank lost) makes a
// new id and a new welcome; the replacements answer the latest.
#include <mmpi/ft/faulttolerance.h>

#include "agreement.h"

#include <mmpi/core/logging.h>

#include <QEventLoop>
#include <QThread>
#include <QTimer>

#include <algorithm>

namespace mmpi {

namespace {

// On Communicator::service(), which only MMPI uses.
constexpr int RebuildTag = 1;
enum Kind : qint64 { WelcomeKind = 1, JoinedKind = 2, RebuiltKind = 3 };

QList<int> sorted(const QSet<int> &set)
{
    QList<int> list(set.begin(), set.end());
    std::sort(list.begin(), list.end());
    return list;
}

// [kind, comm id, control id, n, group (world ranks)..., b, blank..., r, replaced...]
QList<qint64> encodeWelcome(quint32 commId, quint32 controlId, const QList<int> &group, const QList<int> &blank,
                            const QList<int> &replaced)
{
    QList<qint64> items{WelcomeKind, commId, controlId};
    for (const QList<int> *list : {&group, &blank, &replaced}) {
        items.append(list->size());
        for (int worldRank : *list)
            items.append(worldRank);
    }
    return items;
}

template<typename W>
Result<W> decodeWelcome(const QList<qint64> &items)
{
    const Error malformed{ErrorCode::ProtocolViolation, QStringLiteral("malformed REBUILD welcome")};
    if (items.size() < 4)
        return malformed;
    W w{quint32(items.at(1)), quint32(items.at(2)), {}, {}, {}};
    qsizetype at = 3;
    for (QList<int> *list : {&w.group, &w.blank, &w.replaced}) {
        if (at >= items.size())
            return malformed;
        const qint64 n = items.at(at++);
        if (n < 0 || n > items.size() - at)
            return malformed;
        for (qint64 i = 0; i < n; ++i)
            list->append(int(items.at(at++)));
    }
    if (at != items.size())
        return malformed;
    return w;
}

bool isGone(const World &world, int worldRank)
{
    const auto quality = world.linkQuality(worldRank);
    return !quality || quality->status == World::NodeStatus::Lost || quality->status == World::NodeStatus::Left;
}

} // namespace

QList<int> FaultTolerance::awaitedRanks() const
{
    QList<int> ranks;
    for (int worldRank : sorted(m_awaited))
        if (const int rank = m_comm.rankOfWorldRank(worldRank); rank != NoRank)
            ranks.append(rank);
    return ranks;
}

void FaultTolerance::listenForRebuild()
{
    if (m_rebuildInbox || !m_world)
        return;
    auto service = Communicator::service(*m_world);
    if (!service) {
        qCCritical(lcFt).noquote() << "no REBUILD without MMPI's service channel:" << service.error().message;
        return;
    }
    m_rebuildInbox = std::make_unique<MessageListener>(
        *service, this, QStringLiteral("REBUILD"),
        [this](const Status &status, const Request &request) {
            if (const auto items = request.value<QList<qint64>>(); items && !items->isEmpty())
                handleRebuildMessage(status.source, *items);
            else
                qCWarning(lcFt) << "ignoring a malformed REBUILD message from world rank" << status.source;
        },
        RebuildTag);
}

void FaultTolerance::handleRebuildMessage(int source, const QList<qint64> &items)
{
    switch (items.at(0)) {
    case WelcomeKind:
        if (auto welcome = decodeWelcome<Welcome>(items))
            return handleWelcome(source, *welcome);
        break;
    case JoinedKind:
        if (items.size() == 2)
            return handleJoined(source, quint32(items.at(1)));
        break;
    case RebuiltKind:
        if (items.size() == 2)
            return handleRebuilt(source, quint32(items.at(1)));
        break;
    }
    qCWarning(lcFt) << "ignoring a malformed REBUILD message from world rank" << source;
}

void FaultTolerance::sendRebuildMessage(int worldRank, const QList<qint64> &items)
{
    if (auto service = Communicator::service(*m_world))
        service->isend(worldRank, RebuildTag, items); // a node lost since cannot take it: its loss comes as a report
}

// ---------------------------------------------------------------- the replacement

Operation<void> FaultTolerance::awaitWelcome(const Communicator &comm)
{
    m_base = comm;
    m_protecting = std::make_shared<Request::Pending>(Request::pending());
    listenForRebuild();
    const auto timeout = m_world->config().formationTimeout;
    qCInfo(lcFt) << "this node replaces a lost rank: waiting for the survivors to take it in";
    QTimer::singleShot(timeout, this, [this, timeout] {
        if (m_protecting)
            std::exchange(m_protecting, {})->finish(
                {ErrorCode::FormationTimeout,
                 QStringLiteral("the survivors did not take this node into the rebuilt communicator within %1 ms")
                     .arg(timeout.count())});
    });
    // wait() on this thread runs its events meanwhile: the welcome, the links
    // and the announcement all come through them.
    QPointer<FaultTolerance> self(this);
    return Operation<void>(m_protecting->request, [self](const Request &request) -> Result<void> {
        if (self && QThread::currentThread() == self->thread() && !request.isFinished()) {
            QEventLoop loop;
            request.onFinished(&loop, [&loop] { loop.quit(); });
            loop.exec();
        }
        if (auto outcome = request.wait(); !outcome)
            return outcome.error();
        return success();
    });
}

void FaultTolerance::handleWelcome(int source, const Welcome &welcome)
{
    if (m_base.isNull())
        return; // not a replacement waiting to be taken in, or taken in already
    m_welcomes.insert(welcome.commId, welcome);
    m_rebuildId = welcome.commId; // the latest decision's: the one to answer
    m_welcomer = source;
    m_joinedSent = 0; // a welcome again (a replacement came anew): say it again
    qCInfo(lcFt) << "welcomed into communicator" << welcome.commId << "by world rank" << source;
    sendJoinedIfLinked();
    if (m_earlyRebuilt.remove(welcome.commId))
        adoptRebuilt(welcome.commId);
}

// Joined once linked to every member the welcome lists alive.
void FaultTolerance::sendJoinedIfLinked()
{
    const quint32 id = m_rebuildId;
    if (m_base.isNull() || !m_welcomes.contains(id) || m_joinedSent == id)
        return;
    const Welcome &w = m_welcomes.value(id);
    const int me = m_world->rank();
    for (int worldRank : w.group)
        if (worldRank != me && !w.blank.contains(worldRank) && isGone(*m_world, worldRank))
            return; // on again at its nodeRejoined()
    m_joinedSent = id;
    qCInfo(lcFt) << "linked to every member of communicator" << id << ": telling world rank" << m_welcomer;
    sendRebuildMessage(m_welcomer, {JoinedKind, qint64(id)});
}

void FaultTolerance::adoptRebuilt(quint32 id)
{
    const Welcome w = m_welcomes.value(id);
    QList<int> ranks;
    for (int worldRank : w.group)
        ranks.append(m_base.rankOfWorldRank(worldRank));
    auto rebuilt = m_base.createGroup(ranks, w.commId);
    auto control = rebuilt ? m_base.createGroup(ranks, w.controlId) : Result<Communicator>(rebuilt.error());
    if (!control) {
        qCCritical(lcFt).noquote() << "cannot join the rebuilt communicator:" << control.error().message;
        if (m_protecting)
            std::exchange(m_protecting, {})->finish(control.error());
        return;
    }
    m_comm = *rebuilt;
    m_blank = QSet<int>(w.blank.begin(), w.blank.end());
    // Members absent when this node rejoined that came since are no loss.
    for (auto it = m_lost.begin(); it != m_lost.end();)
        it = isGone(*m_world, it.key()) ? std::next(it) : m_lost.erase(it);
    m_welcomes.clear();
    m_base = {};
    m_rebuildId = 0;
    m_lastPolicy = Policy::Rebuild;
    startAgreement(*control);
    QList<int> replaced;
    for (int worldRank : w.replaced)
        replaced.append(m_comm.rankOfWorldRank(worldRank));
    qCWarning(lcFt).noquote() << "joined the rebuilt communicator" << m_comm.id() << "as rank" << m_comm.rank();
    if (m_protecting)
        std::exchange(m_protecting, {})->finish({});
    Q_EMIT ready();
    Q_EMIT ranksRebuilt(replaced);
}

// ---------------------------------------------------------------- the survivors

void FaultTolerance::prepareRebuild(const QList<int> &failed, quint32 id)
{
    for (int rank : failed)
        m_awaited.insert(m_comm.worldRank(rank));
    QList<int> everyone;
    for (int rank = 0; rank < m_comm.size(); ++rank)
        everyone.append(rank);
    // Made now, from the agreed id: no later dup() on this node can take it.
    auto comm = m_comm.createGroup(everyone, id);
    auto control = comm ? m_control.createGroup(everyone, id + 1) : Result<Communicator>(comm.error());
    if (!control) {
        qCCritical(lcFt).noquote() << "cannot prepare REBUILD:" << control.error().message
                                   << "; the lost rank(s) stay blank";
        return dropPendingRebuild();
    }
    m_prepared.insert(id, {*comm, *control, m_awaited, m_blank});
    m_rebuildId = id;
    m_joined.clear();
    if (m_awaited.isEmpty())
        return;
    QStringList waiting;
    for (int rank : awaitedRanks())
        waiting << QString::number(rank);
    qCWarning(lcFt).noquote() << "REBUILD: rank(s)" << waiting.join(u", ")
                              << "stay blank until new nodes rejoin the world in their place";
    if (m_invitesSpares)
        inviteSpares();
}

// After worldReconfigured(): the replacements may all be there already.
void FaultTolerance::advanceRebuild()
{
    if (!m_prepared.contains(m_rebuildId))
        return;
    if (m_awaited.isEmpty()) // a round without a new failure (reconfigure()): a new id is all it makes
        return finishRebuild(m_rebuildId);
    if (m_earlyRebuilt.remove(m_rebuildId))
        return handleRebuilt(m_world->rank(), m_rebuildId);
    welcomeIfReady();
}

void FaultTolerance::inviteSpares()
{
    if (!m_world || speaker() != m_comm.worldRank(m_comm.rank()))
        return;
    for (int worldRank : sorted(m_awaited - m_rejoined))
        m_world->inviteSpare(worldRank);
}

// A spare may come later (someone opens the app): look again while the rank waits.
void FaultTolerance::handleSpareNotFound(int worldRank, const Error &reason)
{
    if (!m_awaited.contains(worldRank) || m_rejoined.contains(worldRank))
        return;
    qCInfo(lcFt).noquote() << reason.message << "; looking again";
    QTimer::singleShot(m_world ? m_world->config().heartbeatInterval : std::chrono::milliseconds(1000), this,
                       [this, worldRank] {
                           if (m_world && m_invitesSpares && m_awaited.contains(worldRank)
                               && !m_rejoined.contains(worldRank))
                               m_world->inviteSpare(worldRank);
                       });
}

void FaultTolerance::handleNodeRejoined(int worldRank)
{
    m_rejoined.insert(worldRank);
    sendJoinedIfLinked(); // a replacement waits for the others too
    if (!m_awaited.contains(worldRank)) {
        if (m_lost.contains(worldRank) && m_base.isNull())
            qCInfo(lcFt) << "world rank" << worldRank << "rejoined before the survivors agreed on REBUILD";
        return;
    }
    welcomeIfReady();
}

void FaultTolerance::welcomeIfReady()
{
    if (!m_prepared.contains(m_rebuildId) || !(m_awaited - m_rejoined).isEmpty()
        || speaker() != m_comm.worldRank(m_comm.rank()))
        return;
    const Prepared &p = m_prepared.value(m_rebuildId);
    const QList<qint64> welcome =
        encodeWelcome(p.comm.id(), p.control.id(), p.comm.group(), sorted(p.blank - p.awaited), sorted(p.awaited));
    qCInfo(lcFt) << "welcoming world rank(s)" << sorted(m_awaited) << "into communicator" << p.comm.id();
    for (int worldRank : sorted(m_awaited))
        sendRebuildMessage(worldRank, welcome);
}

void FaultTolerance::handleJoined(int worldRank, quint32 id)
{
    if (id != m_rebuildId || !m_awaited.contains(worldRank))
        return; // an older welcome's answer
    m_joined.insert(worldRank);
    qCInfo(lcFt) << "world rank" << worldRank << "is linked to every member of communicator" << id << "; waiting for"
                 << sorted(m_awaited - m_joined);
    if ((m_awaited - m_joined).isEmpty())
        handleRebuilt(m_world->rank(), id);
}

void FaultTolerance::handleRebuilt(int worldRank, quint32 id)
{
    if (!m_base.isNull()) { // a replacement
        if (!m_welcomes.contains(id))
            return void(m_earlyRebuilt.insert(id));
        announceRebuilt(id, m_welcomes.value(id).group, worldRank);
        return adoptRebuilt(id);
    }
    if (!m_prepared.contains(id)) {
        if (m_comm.id() != id)
            m_earlyRebuilt.insert(id); // this node's decision has not come yet
        return;
    }
    announceRebuilt(id, m_prepared.value(id).comm.group(), worldRank);
    finishRebuild(id);
}

// Passed on by everyone who hears it: it reaches every member as long as one
// that heard it lives.
void FaultTolerance::announceRebuilt(quint32 id, const QList<int> &group, int except)
{
    const int me = m_world->rank();
    for (int worldRank : group)
        if (worldRank != me && worldRank != except && !isGone(*m_world, worldRank))
            sendRebuildMessage(worldRank, {RebuiltKind, qint64(id)});
}

void FaultTolerance::finishRebuild(quint32 id)
{
    const Prepared p = m_prepared.value(id);
    const QList<int> replacedWorld = sorted(p.awaited);
    QStringList names;
    QList<int> replaced;
    for (int worldRank : replacedWorld) {
        replaced.append(p.comm.rankOfWorldRank(worldRank));
        names << QString::number(replaced.constLast());
    }
    const Error revoked{ErrorCode::Revoked,
                        QStringLiteral("communicator %1 was rebuilt with new nodes for rank(s) %2: use "
                                       "FaultTolerance::communicator()")
                            .arg(m_comm.id())
                            .arg(names.join(u", "))};
    revokeOld(revoked);
    m_comm = p.comm;
    // Lost after this decision (a later one made another id): no longer
    // blank here, so the next agreement hears of them again.
    m_blank = p.blank - p.awaited;
    for (int worldRank : replacedWorld) {
        m_lost.remove(worldRank);
        m_rejoined.remove(worldRank);
    }
    m_awaited.clear();
    m_prepared.clear();
    m_joined.clear();
    m_rebuildId = 0;
    makeSurvivors(0);
    startAgreement(p.control);
    qCWarning(lcFt).noquote() << "REBUILD done: new nodes are rank(s)" << names.join(u", ") << "of communicator"
                              << m_comm.id();
    Q_EMIT ranksRebuilt(replaced);
}

int FaultTolerance::speaker() const
{
    const QList<int> group = m_comm.group();
    const auto first = std::find_if(group.begin(), group.end(),
                                    [&](int worldRank) { return !m_blank.contains(worldRank); });
    return first == group.end() ? NoRank : *first;
}

void FaultTolerance::dropPendingRebuild()
{
    if (!m_awaited.isEmpty())
        qCWarning(lcFt) << "a later decision replaces the pending REBUILD: the awaited rank(s) are not rebuilt";
    m_awaited.clear();
    m_prepared.clear();
    m_joined.clear();
    m_rebuildId = 0;
}

} // namespace mmpi
