// REBUILD (docs/guide/fault-tolerance.md#rebuild): the survivors keep the lost
// ranks blank until replacement nodes rejoin the world in their place, then
// switch to a communicator of the same group with a new id (made when they
// agreed on REBUILD, so that the id is taken on every member) and welcome
// each replacement into it over the world's service channel. A replacement's
// protect() waits for that welcome instead of running a collective.
#include <mmpi/ft/faulttolerance.h>

#include "agreement.h"

#include <mmpi/core/logging.h>

#include <QThread>
#include <QTimer>

#include <algorithm>

namespace mmpi {

namespace {

// On Communicator::service(), which only MMPI uses.
constexpr int WelcomeTag = 1;
constexpr qint64 WelcomeVersion = 1;

QList<int> sorted(const QSet<int> &set)
{
    QList<int> list(set.begin(), set.end());
    std::sort(list.begin(), list.end());
    return list;
}

// [version, comm id, control id, n, group (world ranks)..., b, blank..., r, replaced...]
QList<qint64> encodeWelcome(quint32 commId, quint32 controlId, const QList<int> &group, const QList<int> &blank,
                            const QList<int> &replaced)
{
    QList<qint64> items{WelcomeVersion, commId, controlId};
    for (const QList<int> *list : {&group, &blank, &replaced}) {
        items.append(list->size());
        for (int worldRank : *list)
            items.append(worldRank);
    }
    return items;
}

struct Welcome
{
    quint32 commId = 0;
    quint32 controlId = 0;
    QList<int> group, blank, replaced;
};

Result<Welcome> decodeWelcome(const QList<qint64> &items)
{
    const Error malformed{ErrorCode::ProtocolViolation, QStringLiteral("malformed REBUILD welcome")};
    if (items.size() < 4 || items.at(0) != WelcomeVersion)
        return malformed;
    Welcome w{quint32(items.at(1)), quint32(items.at(2)), {}, {}, {}};
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

} // namespace

QList<int> FaultTolerance::awaitedRanks() const
{
    QList<int> ranks;
    for (int worldRank : sorted(m_awaited))
        if (const int rank = m_comm.rankOfWorldRank(worldRank); rank != NoRank)
            ranks.append(rank);
    return ranks;
}

Operation<void> FaultTolerance::awaitWelcome(const Communicator &comm)
{
    auto service = m_world ? Communicator::service(*m_world) : Result<Communicator>(Communicator());
    const Communicator channel = service ? *service : Communicator();
    const Operation<QList<qint64>> welcome = channel.recv<QList<qint64>>(AnySource, WelcomeTag);
    qCInfo(lcFt) << "this node replaces a lost rank: waiting for the survivors' welcome";
    QPointer<FaultTolerance> self(this);
    const auto adoptHere = [self, welcome, comm]() -> Result<void> {
        auto items = welcome.wait();
        if (!items)
            return items.error();
        if (self && QThread::currentThread() == self->thread())
            return self->adoptWelcome(comm, *items);
        return success();
    };
    welcome.request().onFinished(this, [adoptHere] {
        if (auto ok = adoptHere(); !ok)
            qCWarning(lcFt).noquote() << "cannot join the rebuilt communicator:" << ok.error().message;
    });
    return Operation<void>(welcome.request(), [adoptHere](const Request &) { return adoptHere(); });
}

Result<void> FaultTolerance::adoptWelcome(const Communicator &comm, const QList<qint64> &items)
{
    const auto welcome = decodeWelcome(items);
    if (!welcome)
        return welcome.error();
    if (!m_control.isNull() && m_control.id() == welcome->controlId)
        return success(); // adopted already (wait() and the event loop both get here)
    QList<int> ranks;
    for (int worldRank : welcome->group)
        ranks.append(comm.rankOfWorldRank(worldRank));
    auto rebuilt = comm.createGroup(ranks, welcome->commId);
    if (!rebuilt)
        return rebuilt.error();
    auto control = comm.createGroup(ranks, welcome->controlId);
    if (!control)
        return control.error();
    m_comm = *rebuilt;
    m_blank = QSet<int>(welcome->blank.begin(), welcome->blank.end());
    startAgreement(*control);
    QList<int> replaced;
    for (int worldRank : welcome->replaced)
        replaced.append(m_comm.rankOfWorldRank(worldRank));
    qCWarning(lcFt).noquote() << "joined the rebuilt communicator" << m_comm.id() << "as rank" << m_comm.rank();
    Q_EMIT ready();
    Q_EMIT ranksRebuilt(replaced);
    return success();
}

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
    m_rebuiltComm = *comm;
    m_rebuiltControl = *control;
    QStringList waiting;
    for (int rank : awaitedRanks())
        waiting << QString::number(rank);
    qCWarning(lcFt).noquote() << "REBUILD: rank(s)" << waiting.join(u", ")
                              << "stay blank until new nodes rejoin the world in their place";
    if (m_invitesSpares)
        inviteSpares();
}

void FaultTolerance::inviteSpares()
{
    if (!m_world || speaker({}) != m_comm.worldRank(m_comm.rank()))
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
    if (!m_awaited.contains(worldRank)) {
        if (m_lost.contains(worldRank))
            qCInfo(lcFt) << "world rank" << worldRank << "rejoined before the survivors agreed on REBUILD";
        return;
    }
    if (!m_rebuiltComm.isNull() && (m_awaited - m_rejoined).isEmpty())
        finishRebuild();
}

void FaultTolerance::finishRebuild()
{
    const QList<int> replacedWorld = sorted(m_awaited);
    const QList<int> replaced = awaitedRanks();
    QStringList names;
    for (int rank : replaced)
        names << QString::number(rank);
    const Error revoked{ErrorCode::Revoked,
                        QStringLiteral("communicator %1 was rebuilt with new nodes for rank(s) %2: use "
                                       "FaultTolerance::communicator()")
                            .arg(m_comm.id())
                            .arg(names.join(u", "))};
    revokeOld(revoked);
    m_comm = std::exchange(m_rebuiltComm, {});
    const Communicator control = std::exchange(m_rebuiltControl, {});
    for (int worldRank : replacedWorld) {
        m_blank.remove(worldRank);
        m_lost.remove(worldRank);
        m_rejoined.remove(worldRank);
    }
    m_awaited.clear();
    startAgreement(control);
    sendWelcome(replacedWorld);
    qCWarning(lcFt).noquote() << "REBUILD done: new nodes are rank(s)" << names.join(u", ") << "of communicator"
                              << m_comm.id();
    Q_EMIT ranksRebuilt(replaced);
}

int FaultTolerance::speaker(const QList<int> &replacedWorld) const
{
    const QList<int> group = m_comm.group();
    const auto first = std::find_if(group.begin(), group.end(), [&](int worldRank) {
        return !m_blank.contains(worldRank) && !replacedWorld.contains(worldRank);
    });
    return first == group.end() ? NoRank : *first;
}

void FaultTolerance::sendWelcome(const QList<int> &replacedWorld)
{
    if (speaker(replacedWorld) != m_comm.worldRank(m_comm.rank()))
        return;
    auto service = Communicator::service(*m_world);
    if (!service) {
        qCCritical(lcFt).noquote() << "cannot welcome the new node(s):" << service.error().message;
        return;
    }
    const QList<qint64> welcome =
        encodeWelcome(m_comm.id(), m_control.id(), m_comm.group(), sorted(m_blank), replacedWorld);
    for (int worldRank : replacedWorld)
        service->isend(worldRank, WelcomeTag, welcome);
}

void FaultTolerance::dropPendingRebuild()
{
    if (!m_awaited.isEmpty())
        qCWarning(lcFt) << "a later decision replaces the pending REBUILD: the awaited rank(s) are not rebuilt";
    m_awaited.clear();
    m_rebuiltComm = {};
    m_rebuiltControl = {};
}

} // namespace mmpi
