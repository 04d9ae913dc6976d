// mmpi::CheckpointScheduler: runs a CheckpointStore on an adaptive
// CheckpointPlanner's schedule. It feeds the planner what it sees (write and
// restore times, the world's failures, the computation's run time) and, at
// the app's safe points, writes a checkpoint when the plan says one is due
// (docs/design/checkpoint-planning.md#running-on-the-planners-schedule).
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/core/result.h>
#include <mmpi/ft/checkpointplanner.h>
#include <mmpi/ft/checkpointstore.h>
#include <mmpi/world/world.h>

#include <QCoroTask>
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi {

class CheckpointScheduler : public QObject
{
    Q_OBJECT
public:
    // Seconds on a monotonic clock; only differences matter.
    using Clock = std::function<double()>;

    // What a coordinated checkpointIfDue() did, the same on every member.
    struct Outcome
    {
        bool due = false;   // rank 0's planner said a checkpoint was due
        quint64 epoch = 0;  // the epoch every member wrote (when due and no error)
        Error error;        // NoError on success (also when not due)
    };

    // With a planner of its own, in adaptive mode from `guess` (the costs
    // until measured) and the computation's expected `runTime` in seconds.
    // The store must outlive the scheduler.
    CheckpointScheduler(CheckpointStore &store, const CheckpointCosts &guess, double runTime,
                        QObject *parent = nullptr);
    // With the app's planner, which must outlive the scheduler too.
    CheckpointScheduler(CheckpointStore &store, CheckpointPlanner &planner, QObject *parent = nullptr);
    ~CheckpointScheduler() override;

    CheckpointPlanner &planner() { return *m_planner; }
    const CheckpointPlanner &planner() const { return *m_planner; }
    CheckpointStore &store() const { return m_store; }

    // The world whose failures the planner counts: nodeLost, and
    // nodeUnreachable until nodeReturned (one episode, by its highest class;
    // a RANGE episode's duration is a k2 sample). A coordinated
    // checkpointIfDue() attaches its communicator's world if none is set.
    void setWorld(World *world);
    World *world() const { return m_world; }
    // Whether a failure the world resumed from (nodeReturned) counts toward
    // its class's rate, as in the paper's model (default), or only feeds k2:
    // MMPI resumes NORMAL and RANGE failures without losing a message, so an
    // app that never rolls back for them turns this off.
    void setCountResumedFailures(bool count) { m_countResumed = count; }
    bool countResumedFailures() const { return m_countResumed; }

    // Replaces the clock (tests, simulations); the computation's time starts
    // afresh on it. Without a real clock the scheduler cannot know when a
    // checkpoint falls due between calls, so checkpointDue then comes only
    // from checkpointIfDue().
    void setClock(Clock clock);

    // At a safe point of a single node's computation: the time since the
    // previous call counts as computation; writes a checkpoint if the plan
    // says one is due. The epoch written, nullopt when none was due, or the
    // store's (or the plan's) error, after which the checkpoint stays due.
    Result<std::optional<quint64>> checkpointIfDue();
    // The same, collective over `comm` at a safe point of every member: rank
    // 0's planner decides and the decision is broadcast, so all members agree
    // whatever their clocks say; then CoordinatedCheckpoint::take() on all.
    QCoro::Task<Outcome> checkpointIfDue(Communicator comm,
                                         std::chrono::milliseconds drainTimeout = std::chrono::seconds(30));

    // The plan in force (the planner's current one, as of the last event).
    CheckpointPlanner::Plan plan() const { return m_plan; }
    // Seconds of computation since the last checkpoint (or restore), and
    // until the next is due by this node's plan: 0 when due, infinity when
    // none is needed. For a progress display; in coordinated use rank 0's
    // decides.
    double sinceLastCheckpoint() const;
    double nextCheckpointIn() const;
    // A plan whose interval moved by more than this fraction is announced.
    static constexpr double PlanChangeThreshold = 0.1;

Q_SIGNALS:
    // A checkpoint is due: reach a safe point and call checkpointIfDue().
    // Once per interval, from a call or (real clock) a timer between calls.
    void checkpointDue();
    // This scheduler wrote `epoch`; `seconds` it took (a coordinated one: the
    // whole collective), which is the planner's k0 sample.
    void checkpointTaken(quint64 epoch, double seconds);
    // A due checkpoint could not be written; the previous one stays.
    void checkpointFailed(const mmpi::Error &error);
    // The interval moved noticeably (PlanChangeThreshold), the strategy
    // changed, or checkpoints became (un)needed.
    void planChanged(const mmpi::CheckpointPlanner::Plan &plan);

private:
    CheckpointScheduler(CheckpointStore &store, std::unique_ptr<CheckpointPlanner> own, CheckpointPlanner *external,
                        QObject *parent);
    double now() const;
    // The computation ran from the last mark until `at`.
    void account(double at);
    // The plan's verdict for the time accounted so far.
    Result<bool> isDue() const;
    void finishedWrite(quint64 epoch, double seconds);
    void failedWrite(const Error &error);
    void announceDue();
    void refreshPlan();
    void armDueTimer();
    void onDueTimer();

    void onCheckpointed(double seconds);
    void onRestored(double seconds);
    void onUnreachable(int rank, World::FailureClass failureClass);
    void onReturned(int rank);
    void onLost(int rank, World::FailureClass failureClass);

    struct Episode
    {
        World::FailureClass failureClass = World::FailureClass::Normal;
        double since = 0;
    };

    CheckpointStore &m_store;
    std::unique_ptr<CheckpointPlanner> m_ownPlanner;
    CheckpointPlanner *m_planner;
    QPointer<World> m_world;
    QList<QMetaObject::Connection> m_worldConnections;
    Clock m_clock;
    QElapsedTimer m_realClock;
    bool m_realTime = true;
    QTimer m_dueTimer;

    CheckpointPlanner::Plan m_plan;      // the current one
    CheckpointPlanner::Plan m_announced; // the last planChanged() told
    double m_mark = 0;      // when the computation's time was last accounted
    double m_sinceLast = 0; // computation accounted since the last checkpoint
    bool m_dueAnnounced = false;
    bool m_writing = false; // the store's checkpointed signal is ours
    bool m_countResumed = true;
    QHash<int, Episode> m_episodes; // unreachable peers, by rank
};

} // namespace mmpi
