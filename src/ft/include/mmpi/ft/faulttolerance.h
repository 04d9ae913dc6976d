// mmpi::FaultTolerance: keeps a computation going when members of its
// communicator are lost. The survivors first agree on who failed (a protocol
// that tolerates further failures while it runs), then apply the app's
// policy for the failure class: SHRINK, BLANK, REBUILD or ABORT
// (docs/guide/fault-tolerance.md#policies-and-agreement). Lives in the app's thread.
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>
#include <mmpi/ft/policy.h>
#include <mmpi/world/world.h>

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>

#include <memory>

namespace mmpi {

namespace detail { class Agreement; }

class FaultTolerance : public QObject
{
    Q_OBJECT
public:
    explicit FaultTolerance(World *world, QObject *parent = nullptr);
    ~FaultTolerance() override;

    // Protect `comm`: collective (it makes a communicator of its own for the
    // agreement), so every member calls it, in the same order as the other
    // collectives on `comm`. Protection starts when the operation finishes:
    // wait() for it or co_await it on this object's thread, or let the
    // event loop run (ready() says when).
    // On a replacement node (WorldConfig::rejoin) it is not collective: it
    // finishes when the survivors welcome the node into the rebuilt
    // communicator, which communicator() then returns (REBUILD).
    Operation<void> protect(const Communicator &comm);

    // The policy for members lost with `failureClass` (World::nodeLost).
    // Defaults: NodeTerm -> Shrink, Range and Normal -> Blank (these are
    // lost only with reconnection off). When several members fail at once
    // the strictest policy of theirs applies: Abort, Shrink, Rebuild, Blank.
    void setPolicy(World::FailureClass failureClass, Policy policy);
    Policy policy(World::FailureClass failureClass) const;
    // REBUILD with spares: when the survivors agree on REBUILD, the lowest
    // of them also invites spares (World::inviteSpare: nodes advertising
    // the world, in none yet) to take the lost ranks, and keeps looking
    // while a rank waits. Off by default: discovery costs radio time, and a
    // launched replacement (mmpirun --respawn) needs none.
    void setInvitesSpares(bool invite) { m_invitesSpares = invite; }
    bool invitesSpares() const { return m_invitesSpares; }

    // The communicator to use now: after SHRINK, the survivors'.
    Communicator communicator() const { return m_comm; }
    // The live members of communicator(), without its blank ranks (BLANK,
    // and REBUILD until the replacements arrive): made by every survivor
    // from the agreed decision, so getting it needs no collective on the
    // broken communicator (ULFM's MPI_Comm_shrink). Each new decision
    // replaces (and revokes) the last one; communicator() when none is blank.
    Communicator survivors() const { return m_survivors.isNull() ? m_comm : m_survivors; }
    // World rank of each rank of communicator(): the rank map SHRINK publishes.
    QList<int> rankMap() const { return m_comm.group(); }
    // Ranks of communicator() that failed and were kept (BLANK, and REBUILD
    // until their replacements arrive).
    QList<int> blankRanks() const;
    // REBUILD: ranks of communicator() waiting for a replacement node.
    QList<int> awaitedRanks() const;
    // The survivors are agreeing on the failed set (no policy applied yet).
    bool isReconfiguring() const { return m_reconfiguring; }
    // Ask the members for a new agreement although nobody new failed: the
    // way out when the app's recovery failed on some member (a
    // CoordinatedCheckpoint::recover() that a later loss or an interrupted
    // collective broke). One member's call starts the round for all; its
    // outcome comes as usual (worldReconfigured(), and after REBUILD
    // ranksRebuilt() with the ranks still to restore, none if all are
    // there), on a communicator with a new id. Harmless while a round runs.
    void reconfigure();

Q_SIGNALS:
    // protect() is done: failures are handled from now on.
    void ready();
    // A member was lost; the survivors agree on what failed before acting.
    // Once per round, before its outcome, also on a node that hears of the
    // failure only through the agreement (the others' proposals came first).
    void reconfiguring();
    // The policy was applied: `failed` holds the members that failed this
    // time, as ranks of the communicator before (for Shrink, the old one).
    void worldReconfigured(mmpi::Policy policy, const QList<int> &failed);
    // REBUILD is complete: replacement nodes took `ranks` (of the new
    // communicator(), which has the same group as before and a new id; the
    // old one is revoked). The app restores its state now, on every member:
    // CoordinatedCheckpoint::recover(communicator(), store).
    void ranksRebuilt(const QList<int> &ranks);
    // ABORT: this node stops (the world is closing); `reason` names the lost
    // rank. Every survivor gets it. Let the close finish before the process
    // ends (World::closeAndWait()): the decision this node sent the others
    // goes out with it, and a survivor that has not heard it yet may need it.
    void aborted(const mmpi::Error &reason);

private:
    void handleNodeLost(int worldRank, World::FailureClass failureClass, const Error &reason);
    void startReconfiguring(); // reconfiguring() once per round
    void revokeOld(const Error &revoked);
    void makeSurvivors(quint32 id);
    // REBUILD (faulttolerancerebuild.cpp)
    struct Prepared
    {
        Communicator comm, control; // made from the decision's id
        QSet<int> awaited, blank;   // world ranks, as the decision left them
    };
    struct Welcome
    {
        quint32 commId = 0;
        quint32 controlId = 0;
        QList<int> group, blank, replaced;
    };
    void listenForRebuild();
    void handleRebuildMessage(int source, const QList<qint64> &items);
    Operation<void> awaitWelcome(const Communicator &comm);
    void handleWelcome(int source, const Welcome &welcome);
    void sendJoinedIfLinked();
    void adoptRebuilt(quint32 id);
    void prepareRebuild(const QList<int> &failed, quint32 id);
    void advanceRebuild();
    void handleNodeRejoined(int worldRank);
    void welcomeIfReady();
    void handleJoined(int worldRank, quint32 id);
    void handleRebuilt(int worldRank, quint32 id);
    void announceRebuilt(quint32 id, const QList<int> &group, int except);
    void finishRebuild(quint32 id);
    void sendRebuildMessage(int worldRank, const QList<qint64> &items);
    // The world rank that speaks for the survivors: the lowest member that
    // was there all along (not blank).
    int speaker() const;
    void inviteSpares();
    void handleSpareNotFound(int worldRank, const Error &reason);
    void dropPendingRebuild();
    void adopt(const Communicator &comm, const Communicator &control);
    void startAgreement(const Communicator &control);
    void apply(int round, const QList<int> &failed, Policy policy, quint32 id);
    Policy choose(const QList<int> &failed) const;
    Error abortReason(const QList<int> &failed) const;

    QPointer<World> m_world;
    Communicator m_comm;
    Communicator m_control;
    detail::Agreement *m_agreement = nullptr;
    detail::Agreement *m_retiredAgreement = nullptr; // the one before, answering late members
    QHash<World::FailureClass, Policy> m_policies;
    QHash<int, std::pair<World::FailureClass, Error>> m_lost; // by world rank
    QSet<int> m_blank; // world ranks
    // REBUILD under way: the lost members (world ranks) awaited, those that
    // rejoined, and the communicators (made at the decision, so that their
    // ids are taken) that include the replacements.
    QSet<int> m_awaited;
    QSet<int> m_rejoined;
    QHash<quint32, Prepared> m_prepared; // by the rebuilt communicator's id, since the last REBUILD done
    quint32 m_rebuildId = 0;             // the latest decision's (0: no REBUILD under way)
    QSet<int> m_joined;                  // speaker: replacements linked to every member, for m_rebuildId
    QSet<quint32> m_earlyRebuilt;        // announced before this node's own decision came
    // A replacement, until the survivors take it in: the welcomes it got (by
    // id), who sent the last, and its protect() still to finish.
    Communicator m_base;
    QHash<quint32, Welcome> m_welcomes;
    int m_welcomer = -1;
    quint32 m_joinedSent = 0;
    std::shared_ptr<Request::Pending> m_protecting;
    std::unique_ptr<MessageListener> m_rebuildInbox; // on Communicator::service()
    Communicator m_survivors;
    Policy m_lastPolicy = Policy::Blank; // what a round without a new failure applies again
    bool m_reconfiguring = false;
    bool m_aborting = false; // aborted: the world closes, nothing more is agreed
    bool m_invitesSpares = false;
};

} // namespace mmpi
