#include <mmpi/ft/faulttolerance.h>

#include "agreement.h"

#include <mmpi/core/logging.h>

#include <QMetaEnum>
#include <QPointer>
#include <QThread>

namespace mmpi {

namespace {

// Which policy wins when members with different ones fail together.
int strictness(Policy policy)
{
    switch (policy) {
    case Policy::Abort:
        return 3;
    case Policy::Shrink:
        return 2;
    case Policy::Rebuild:
        return 1;
    case Policy::Blank:
        return 0;
    }
    return 0;
}

QString rankList(const QList<int> &ranks)
{
    QStringList parts;
    for (int rank : ranks)
        parts << QString::number(rank);
    return parts.join(u", ");
}

template<typename E>
const char *nameOf(E value)
{
    return QMetaEnum::fromType<E>().valueToKey(int(value));
}

} // namespace

FaultTolerance::FaultTolerance(World *world, QObject *parent)
    : QObject(parent)
    , m_world(world)
    , m_policies{{World::FailureClass::Normal, Policy::Blank},
                 {World::FailureClass::Range, Policy::Blank},
                 {World::FailureClass::NodeTerm, Policy::Shrink}}
{
    connect(world, &World::nodeLost, this, &FaultTolerance::handleNodeLost);
    connect(world, &World::nodeRejoined, this, &FaultTolerance::handleNodeRejoined);
    connect(world, &World::spareNotFound, this, &FaultTolerance::handleSpareNotFound);
}

FaultTolerance::~FaultTolerance() = default;

Operation<void> FaultTolerance::protect(const Communicator &comm)
{
    if (m_world && m_world->isReplacement())
        return awaitWelcome(comm);
    const Operation<Communicator> dup = comm.dup();
    QPointer<FaultTolerance> self(this);
    // Whichever comes first on this thread, a wait() or the event loop, adopts it.
    const auto adoptHere = [self, dup, comm]() -> Result<void> {
        auto control = dup.wait();
        if (!control)
            return control.error();
        if (self && QThread::currentThread() == self->thread())
            self->adopt(comm, *control);
        return success();
    };
    dup.request().onFinished(this, [adoptHere] {
        if (auto ok = adoptHere(); !ok)
            qCWarning(lcFt).noquote() << "cannot protect the communicator:" << ok.error().message;
    });
    return Operation<void>(dup.request(), [adoptHere](const Request &) { return adoptHere(); });
}

void FaultTolerance::adopt(const Communicator &comm, const Communicator &control)
{
    if (!m_control.isNull() && m_control.id() == control.id())
        return;
    m_comm = comm;
    m_blank.clear();
    startAgreement(control);
    listenForRebuild();
    Q_EMIT ready();
}

void FaultTolerance::setPolicy(World::FailureClass failureClass, Policy policy)
{
    m_policies.insert(failureClass, policy);
}

Policy FaultTolerance::policy(World::FailureClass failureClass) const
{
    return m_policies.value(failureClass, Policy::Shrink);
}

QList<int> FaultTolerance::blankRanks() const
{
    QList<int> ranks;
    for (int worldRank : m_blank)
        if (const int rank = m_comm.rankOfWorldRank(worldRank); rank != NoRank)
            ranks.append(rank);
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

void FaultTolerance::startAgreement(const Communicator &control)
{
    // The one before stays, retired, until the next replaces it: a member
    // whose coordinator died while telling everyone the decision asks this
    // node for it on the old control communicator (two ranks lost 5 ms
    // apart, the second the coordinator of the first's round), and without
    // an answer it would never join the new communicator.
    if (m_agreement) {
        m_agreement->disconnect(this);
        m_agreement->retire();
        if (m_retiredAgreement)
            m_retiredAgreement->deleteLater(); // it may be emitting the decision that got us here
        m_retiredAgreement = m_agreement;
    }
    m_control = control;
    m_agreement = new detail::Agreement(control, [this](const QList<int> &failed) { return choose(failed); }, this);
    connect(m_agreement, &detail::Agreement::decided, this, [this](const detail::Agreement::Decision &d) {
        apply(int(d.round), d.failed, d.policy, d.id);
    });
    // Members lost before (or while the last round ran) and still in the group.
    for (auto it = m_lost.cbegin(); it != m_lost.cend(); ++it)
        if (const int rank = control.rankOfWorldRank(it.key()); rank != NoRank && !m_blank.contains(it.key()))
            m_agreement->reportFailure(rank);
}

void FaultTolerance::handleNodeLost(int worldRank, World::FailureClass failureClass, const Error &reason)
{
    m_lost.insert(worldRank, {failureClass, reason});
    m_rejoined.remove(worldRank);
    if (m_awaited.contains(worldRank))
        m_joined.clear(); // the other replacements link to the next one anew
    if (!m_agreement || m_aborting)
        return;
    const int rank = m_control.rankOfWorldRank(worldRank);
    if (rank == NoRank || m_blank.contains(worldRank))
        return;
    qCWarning(lcFt).noquote() << "rank" << rank << "(world rank" << worldRank << ") was lost ("
                              << nameOf(failureClass) << "): the survivors agree on what failed";
    startReconfiguring();
    // A decision that came before this loss (the coordinator decided, then
    // closed: ABORT does) may still wait in the event queue. Applied first,
    // or this node would decide alone with the coordinator counted as failed.
    const detail::Agreement *before = m_agreement;
    m_agreement->deliverPending();
    if (m_aborting || m_blank.contains(worldRank) || m_control.rankOfWorldRank(worldRank) == NoRank)
        return; // nothing follows, or the decision covers this loss
    startReconfiguring(); // again if a decision without this loss ended the last round
    // After SHRINK the new agreement was told of every loss known, this one too.
    if (m_agreement == before)
        m_agreement->reportFailure(rank);
}

void FaultTolerance::reconfigure()
{
    if (!m_agreement || m_aborting) {
        qCWarning(lcFt) << "reconfigure(): nothing to agree on (not protecting a communicator, or aborted)";
        return;
    }
    qCWarning(lcFt) << "the app asks for a new agreement";
    startReconfiguring();
    m_agreement->requestRound();
}

// Once per round on every member: what waits on the app's communicators
// (a receive from a live rank, a collective another survivor left) is woken,
// so nobody waits for a round that was abandoned. Every member interrupts
// the same communicators once per round, which keeps their collectives in
// step (Communicator::interrupt()).
void FaultTolerance::startReconfiguring()
{
    if (std::exchange(m_reconfiguring, true))
        return;
    const Error abandoned{ErrorCode::Reconfigured,
                          QStringLiteral("the world is reconfiguring after a failure: wait for "
                                         "FaultTolerance::worldReconfigured(), then go on")};
    m_comm.interrupt(abandoned);
    if (!m_survivors.isNull())
        m_survivors.interrupt(abandoned);
    Q_EMIT reconfiguring();
}

Policy FaultTolerance::choose(const QList<int> &failed) const
{
    if (failed.isEmpty())
        return m_lastPolicy; // reconfigure() with every member there: the same again, with new ids
    Policy chosen = Policy::Blank;
    for (int rank : failed) {
        const int worldRank = m_control.worldRank(rank);
        // A failure only others saw: its app ended as far as we know.
        const auto failureClass = m_lost.contains(worldRank) ? m_lost.value(worldRank).first
                                                             : World::FailureClass::NodeTerm;
        const Policy p = policy(failureClass);
        if (strictness(p) > strictness(chosen))
            chosen = p;
    }
    return chosen;
}

Error FaultTolerance::abortReason(const QList<int> &failed) const
{
    QStringList parts;
    for (int rank : failed) {
        const int worldRank = m_control.worldRank(rank);
        const auto lost = m_lost.value(worldRank, {World::FailureClass::NodeTerm, Error{}});
        parts << QStringLiteral("rank %1 (%2%3)")
                     .arg(rank)
                     .arg(QLatin1String(nameOf(lost.first)))
                     .arg(lost.second.isError() ? QStringLiteral(": ") + lost.second.message : QString());
    }
    return {ErrorCode::NodeLost, QStringLiteral("aborting: lost %1; the policy is ABORT").arg(parts.join(u", "))};
}

// Every member makes the same from the same decision: no collective on the
// communicator whose members are blank.
void FaultTolerance::makeSurvivors(quint32 id)
{
    if (!m_survivors.isNull())
        m_survivors.revoke({ErrorCode::Revoked, QStringLiteral("the survivors' communicator %1 was replaced after a "
                                                               "later decision: use FaultTolerance::survivors()")
                                                    .arg(m_survivors.id())},
                           RevokeScope::ThisNode);
    m_survivors = {};
    if (m_blank.isEmpty() || id == 0)
        return;
    QList<int> live;
    for (int rank = 0; rank < m_comm.size(); ++rank)
        if (!m_blank.contains(m_comm.worldRank(rank)))
            live.append(rank);
    if (auto comm = m_comm.createGroup(live, id))
        m_survivors = *comm;
    else
        qCCritical(lcFt).noquote() << "cannot make the survivors' communicator:" << comm.error().message;
}

// The old communicator everywhere: a member still blocked in an operation on
// it is woken. Not the control one, which only the agreements use: the
// retired agreement still answers on it (startAgreement()).
void FaultTolerance::revokeOld(const Error &revoked)
{
    m_comm.revoke(revoked);
}

void FaultTolerance::apply(int round, const QList<int> &failed, Policy policy, quint32 id)
{
    startReconfiguring();
    m_reconfiguring = false;
    QList<int> newly;
    for (int rank : failed)
        if (!m_blank.contains(m_comm.worldRank(rank)))
            newly.append(rank);
    qCWarning(lcFt).noquote() << "round" << round << ": the survivors agree that rank(s)" << failed
                              << "failed; policy" << nameOf(policy);
    m_lastPolicy = policy;
    switch (policy) {
    case Policy::Abort: {
        // Once: losses heard while the world closes would start new rounds.
        m_aborting = true;
        m_agreement->disconnect(this);
        dropPendingRebuild();
        const Error reason = abortReason(failed);
        qCCritical(lcFt).noquote() << reason.message;
        Q_EMIT aborted(reason);
        if (m_world)
            m_world->close();
        return;
    }
    case Policy::Rebuild:
    case Policy::Blank:
        for (int rank : failed)
            m_blank.insert(m_comm.worldRank(rank));
        if (policy == Policy::Rebuild)
            prepareRebuild(newly, id);
        else
            dropPendingRebuild();
        makeSurvivors(id + 2); // id and id + 1: the rebuilt communicator and its control
        Q_EMIT worldReconfigured(policy, newly);
        advanceRebuild();
        return;
    case Policy::Shrink:
        dropPendingRebuild();
        break;
    }
    QList<int> survivors;
    for (int rank = 0; rank < m_comm.size(); ++rank)
        if (!failed.contains(rank))
            survivors.append(rank);
    auto shrunk = m_comm.createGroup(survivors, id);
    auto control = shrunk ? m_control.createGroup(survivors, id + 1) : Result<Communicator>(shrunk.error());
    if (!control) {
        const Error error{control.error().code, QStringLiteral("cannot shrink: %1").arg(control.error().message)};
        qCCritical(lcFt).noquote() << error.message;
        m_aborting = true;
        Q_EMIT aborted(error);
        if (m_world)
            m_world->close();
        return;
    }
    const Error revoked{ErrorCode::Revoked,
                        QStringLiteral("communicator %1 was shrunk to %2 rank(s) after rank(s) %3 failed: use "
                                       "FaultTolerance::communicator()")
                            .arg(m_comm.id())
                            .arg(survivors.size())
                            .arg(rankList(failed))};
    revokeOld(revoked);
    m_comm = *shrunk;
    m_blank.clear();
    makeSurvivors(0);
    startAgreement(*control);
    qCWarning(lcFt).noquote() << "shrunk to" << m_comm.size() << "rank(s); this node is now rank" << m_comm.rank();
    Q_EMIT worldReconfigured(Policy::Shrink, newly);
}

} // namespace mmpi
