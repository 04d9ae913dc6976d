#include <mmpi/ft/checkpointscheduler.h>

#include <mmpi/core/logging.h>
#include <mmpi/ft/coordinatedcheckpoint.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mmpi {

namespace {

constexpr double Infinity = std::numeric_limits<double>::infinity();

// Whether `next` is worth telling an app that shows `shown`.
bool differsNoticeably(const CheckpointPlanner::Plan &shown, const CheckpointPlanner::Plan &next)
{
    if (shown.strategy != next.strategy)
        return true;
    if (std::isinf(shown.interval) || std::isinf(next.interval))
        return std::isinf(shown.interval) != std::isinf(next.interval);
    return std::abs(next.interval - shown.interval) > CheckpointScheduler::PlanChangeThreshold * shown.interval;
}

// A timer's milliseconds for `seconds`, rounded up so it never fires early,
// and capped where QTimer's int would overflow (the timer re-arms then).
int timerMilliseconds(double seconds)
{
    constexpr double Cap = 24 * 3600 * 1000.0;
    return int(std::min(Cap, std::ceil(std::max(0.0, seconds) * 1000)));
}

} // namespace

CheckpointScheduler::CheckpointScheduler(CheckpointStore &store, const CheckpointCosts &guess, double runTime,
                                         QObject *parent)
    : CheckpointScheduler(store, std::make_unique<CheckpointPlanner>(guess, runTime), nullptr, parent)
{
}

CheckpointScheduler::CheckpointScheduler(CheckpointStore &store, CheckpointPlanner &planner, QObject *parent)
    : CheckpointScheduler(store, nullptr, &planner, parent)
{
}

CheckpointScheduler::CheckpointScheduler(CheckpointStore &store, std::unique_ptr<CheckpointPlanner> own,
                                         CheckpointPlanner *external, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_ownPlanner(std::move(own))
    , m_planner(m_ownPlanner ? m_ownPlanner.get() : external)
{
    m_realClock.start();
    m_clock = [this] { return double(m_realClock.nsecsElapsed()) / 1e9; };
    m_dueTimer.setSingleShot(true);
    m_dueTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_dueTimer, &QTimer::timeout, this, &CheckpointScheduler::onDueTimer);
    connect(&m_store, &CheckpointStore::checkpointed, this,
            [this](quint64, qint64, double seconds) { onCheckpointed(seconds); });
    connect(&m_store, &CheckpointStore::restored, this,
            [this](quint64, qint64, double seconds) { onRestored(seconds); });
    m_mark = now();
    if (auto plan = m_planner->currentPlan())
        m_plan = m_announced = *plan;
    armDueTimer();
}

CheckpointScheduler::~CheckpointScheduler() = default;

void CheckpointScheduler::setWorld(World *world)
{
    for (const auto &connection : std::as_const(m_worldConnections))
        disconnect(connection);
    m_worldConnections.clear();
    m_episodes.clear();
    m_world = world;
    if (!world)
        return;
    m_worldConnections << connect(world, &World::nodeUnreachable, this, &CheckpointScheduler::onUnreachable)
                       << connect(world, &World::nodeReturned, this, &CheckpointScheduler::onReturned)
                       << connect(world, &World::nodeLost, this,
                                  [this](int rank, World::FailureClass failureClass, const Error &) {
                                      onLost(rank, failureClass);
                                  });
}

void CheckpointScheduler::setClock(Clock clock)
{
    // Times of two clocks do not subtract: the new one starts the
    // computation's time afresh (what ran since the last call is dropped).
    m_realTime = false;
    m_clock = std::move(clock);
    m_mark = now();
    m_dueTimer.stop();
}

double CheckpointScheduler::now() const { return m_clock(); }

void CheckpointScheduler::account(double at)
{
    const double ran = std::max(0.0, at - m_mark);
    m_mark = at;
    if (ran == 0)
        return;
    m_sinceLast += ran;
    m_planner->recordRunTime(ran);
}

Result<bool> CheckpointScheduler::isDue() const
{
    auto left = m_planner->nextCheckpointIn(m_sinceLast);
    if (!left)
        return left.error();
    return *left == 0;
}

double CheckpointScheduler::sinceLastCheckpoint() const { return m_sinceLast + std::max(0.0, now() - m_mark); }

double CheckpointScheduler::nextCheckpointIn() const
{
    auto left = m_planner->nextCheckpointIn(sinceLastCheckpoint());
    return left ? *left : Infinity;
}

Result<std::optional<quint64>> CheckpointScheduler::checkpointIfDue()
{
    if (m_writing)
        return Error(ErrorCode::CheckpointFailed, QStringLiteral("a checkpoint is being written already"));
    account(now());
    refreshPlan();
    const auto due = isDue();
    if (!due)
        return due.error();
    if (!*due) {
        armDueTimer();
        return std::optional<quint64>{};
    }
    announceDue();
    m_writing = true;
    const double start = now();
    const auto written = m_store.checkpoint();
    m_writing = false;
    if (!written) {
        failedWrite(written.error());
        return written.error();
    }
    finishedWrite(*written, std::max(0.0, now() - start));
    return std::optional<quint64>(*written);
}

QCoro::Task<CheckpointScheduler::Outcome> CheckpointScheduler::checkpointIfDue(Communicator comm,
                                                                               std::chrono::milliseconds drainTimeout)
{
    if (comm.isNull() || !comm.world())
        co_return Outcome{false, 0, {ErrorCode::NotFormed, QStringLiteral("scheduled checkpoint on a null communicator")}};
    if (m_writing)
        co_return Outcome{false, 0, {ErrorCode::CheckpointFailed, QStringLiteral("a checkpoint is being written already")}};
    if (!m_world)
        setWorld(comm.world());
    account(now());
    refreshPlan();
    // Rank 0 decides: members' clocks and planners may disagree, and a
    // collective that only some members enter would hang the others.
    qint32 decision = 0;
    QString why;
    if (comm.rank() == 0) {
        const auto due = isDue();
        decision = !due ? -1 : *due ? 1 : 0;
        if (!due)
            why = due.error().message;
    }
    const auto told = co_await comm.bcast(decision, 0);
    if (!told)
        co_return Outcome{false, 0, told.error()};
    if (*told < 0) {
        const auto reason = co_await comm.bcast(why, 0);
        const QString message = reason ? *reason : reason.error().message;
        co_return Outcome{false, 0, {ErrorCode::BadConfiguration, QStringLiteral("rank 0's %1").arg(message)}};
    }
    if (*told == 0) {
        armDueTimer();
        co_return Outcome{};
    }
    announceDue();
    m_writing = true;
    m_dueTimer.stop();
    CheckpointStore *store = &m_store;
    const double start = now();
    const auto taken = co_await CoordinatedCheckpoint::take(comm, store, drainTimeout);
    m_writing = false;
    if (taken.error.isError()) {
        failedWrite(taken.error);
        co_return Outcome{true, 0, taken.error};
    }
    finishedWrite(taken.epoch, std::max(0.0, now() - start));
    co_return Outcome{true, taken.epoch, {}};
}

void CheckpointScheduler::finishedWrite(quint64 epoch, double seconds)
{
    m_planner->recordCheckpointWrite(seconds);
    m_mark = now();
    m_sinceLast = 0;
    m_dueAnnounced = false;
    refreshPlan();
    armDueTimer();
    qCDebug(lcFt) << "scheduled checkpoint: epoch" << epoch << "in" << seconds << "s; next in" << m_plan.interval << "s";
    Q_EMIT checkpointTaken(epoch, seconds);
}

// The attempt's time is no computation; the checkpoint stays due, so the
// next call tries again.
void CheckpointScheduler::failedWrite(const Error &error)
{
    m_mark = now();
    qCWarning(lcFt) << "scheduled checkpoint failed:" << error.message;
    Q_EMIT checkpointFailed(error);
}

void CheckpointScheduler::announceDue()
{
    if (m_dueAnnounced)
        return;
    m_dueAnnounced = true;
    m_dueTimer.stop();
    Q_EMIT checkpointDue();
}

void CheckpointScheduler::refreshPlan()
{
    auto plan = m_planner->currentPlan();
    if (!plan)
        return; // checkpointIfDue() reports it
    m_plan = *plan;
    if (!differsNoticeably(m_announced, m_plan))
        return;
    qCInfo(lcFt) << "checkpoint plan: every" << m_plan.interval << "s of computation (was" << m_announced.interval
                 << "s), strategy" << m_plan.strategy;
    m_announced = m_plan;
    Q_EMIT planChanged(m_plan);
}

// Only with the real clock: a timer cannot wait for an app's own clock.
void CheckpointScheduler::armDueTimer()
{
    if (!m_realTime || m_writing || m_dueAnnounced)
        return;
    const double left = nextCheckpointIn();
    if (std::isinf(left)) {
        m_dueTimer.stop();
        return;
    }
    m_dueTimer.start(timerMilliseconds(left));
}

void CheckpointScheduler::onDueTimer()
{
    // The plan may have moved since the timer was set (or the cap cut it).
    if (nextCheckpointIn() > 0)
        armDueTimer();
    else
        announceDue();
}

// A checkpoint written by someone else (the app itself, a restore's
// import): its k0 counts, and the schedule starts over from it.
void CheckpointScheduler::onCheckpointed(double seconds)
{
    if (m_writing)
        return; // ours, timed as a whole by checkpointIfDue()
    const double at = now();
    account(std::max(m_mark, at - seconds));
    m_mark = at;
    m_planner->recordCheckpointWrite(seconds);
    m_sinceLast = 0;
    m_dueAnnounced = false;
    refreshPlan();
    armDueTimer();
}

// The computation is back at a checkpoint: nothing done since it is kept.
void CheckpointScheduler::onRestored(double seconds)
{
    const double at = now();
    account(std::max(m_mark, at - seconds));
    m_mark = at;
    m_planner->recordRestore(seconds);
    m_sinceLast = 0;
    m_dueAnnounced = false;
    refreshPlan();
    armDueTimer();
}

// One episode per peer until it returns or is lost, counted once by the
// class it ends with (a NORMAL raised to RANGE is one RANGE).
void CheckpointScheduler::onUnreachable(int rank, World::FailureClass failureClass)
{
    auto episode = m_episodes.find(rank);
    if (episode == m_episodes.end())
        m_episodes.insert(rank, {failureClass, now()});
    else
        episode->failureClass = std::max(episode->failureClass, failureClass);
}

void CheckpointScheduler::onReturned(int rank)
{
    // An episode that began before setWorld() has no start nor class.
    if (!m_episodes.contains(rank))
        return;
    const Episode episode = m_episodes.take(rank);
    // k2 is what a RANGE recovery spends relinking (the model charges a
    // NORMAL one nothing for it); an I/O error's quick redial would bias it.
    if (episode.failureClass == World::FailureClass::Range)
        m_planner->recordReconnect(std::max(0.0, now() - episode.since));
    if (m_countResumed)
        m_planner->recordFailure(episode.failureClass);
    qCDebug(lcFt) << "checkpoint scheduler: rank" << rank << "returned after a" << episode.failureClass << "failure";
    refreshPlan();
    armDueTimer();
}

void CheckpointScheduler::onLost(int rank, World::FailureClass failureClass)
{
    m_episodes.remove(rank);
    m_planner->recordFailure(failureClass);
    qCDebug(lcFt) << "checkpoint scheduler: rank" << rank << "lost," << failureClass;
    refreshPlan();
    armDueTimer();
}

} // namespace mmpi
