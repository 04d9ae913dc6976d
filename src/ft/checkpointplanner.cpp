#include <mmpi/ft/checkpointplanner.h>

#include <mmpi/core/logging.h>

#include <algorithm>
#include <cmath>

namespace mmpi {

namespace {

constexpr double Infinity = std::numeric_limits<double>::infinity();
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

std::array<double, 3> asArray(const FailureRates &r) { return {r.normal, r.range, r.nodeTerm}; }
std::array<double, 3> asArray(const ClassIntervals &t) { return {t.normal, t.range, t.nodeTerm}; }

int indexOf(World::FailureClass failureClass)
{
    switch (failureClass) {
    case World::FailureClass::Normal:
        return 0;
    case World::FailureClass::Range:
        return 1;
    case World::FailureClass::NodeTerm:
        return 2;
    }
    return 0;
}

// Per second of computation: writes (k/t) plus work redone (alpha·t/2). The
// limits are spelled out because 0/0 and 0·inf would otherwise poison
// the degenerate plans (free checkpoints, a class that never fails).
double overheadRate(double writeCost, double alpha, double t)
{
    if (std::isnan(t) || t < 0)
        return NaN;
    const double writes = writeCost == 0 ? 0 : writeCost / t;
    const double rework = alpha == 0 ? 0 : alpha * t / 2;
    return writes + rework;
}

// Expected recovery time per second of computation, which no interval
// changes: NORMAL restores (k1), RANGE relinks first (k2), NODETERM re-forms
// the world first (k3).
double recoveryRate(const CheckpointCosts &c, const FailureRates &r)
{
    return r.normal * c.k1 + r.range * (c.k2 + c.k1) + r.nodeTerm * (c.k3 + c.k1);
}

double totalRate(const FailureRates &r) { return r.normal + r.range + r.nodeTerm; }

double sumOfRoots(const FailureRates &r)
{
    return std::sqrt(r.normal) + std::sqrt(r.range) + std::sqrt(r.nodeTerm);
}

Error badInput(const QString &what, double value, const QString &rule)
{
    return Error(ErrorCode::BadConfiguration,
                 QStringLiteral("checkpoint plan: %1 is %2; it must be %3").arg(what, QString::number(value), rule));
}

bool finiteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

// Single-point wins when m·Lambda <= (sum sqrt alpha)^2. Both sides are
// rounded, and with one failing class they are equal in exact arithmetic:
// the slack keeps such ties on single-point instead of flipping on a bit.
bool singlePointWins(const CheckpointCosts &c, const FailureRates &r)
{
    const double roots = sumOfRoots(r);
    return c.k0 == 0 || c.singlePointFactor * totalRate(r) <= roots * roots * (1 + 16 * std::numeric_limits<double>::epsilon());
}

Result<void> validateRates(const FailureRates &r, const QString &whose)
{
    const QString perSecond = QStringLiteral("a finite number of failures per second, 0 or more");
    if (!finiteNonNegative(r.normal))
        return badInput(QStringLiteral("the %1NORMAL failure rate").arg(whose), r.normal, perSecond);
    if (!finiteNonNegative(r.range))
        return badInput(QStringLiteral("the %1RANGE failure rate").arg(whose), r.range, perSecond);
    if (!finiteNonNegative(r.nodeTerm))
        return badInput(QStringLiteral("the %1NODETERM failure rate").arg(whose), r.nodeTerm, perSecond);
    return success();
}

} // namespace

Result<void> CheckpointPlanner::validate(const CheckpointCosts &c, const FailureRates &r, double runTime)
{
    const QString seconds = QStringLiteral("a finite number of seconds, 0 or more");
    if (!finiteNonNegative(c.k0))
        return badInput(QStringLiteral("k0 (the time to write a checkpoint)"), c.k0, seconds);
    if (!finiteNonNegative(c.k1))
        return badInput(QStringLiteral("k1 (the time to restore a checkpoint)"), c.k1, seconds);
    if (!finiteNonNegative(c.k2))
        return badInput(QStringLiteral("k2 (the time to restore the links)"), c.k2, seconds);
    if (!finiteNonNegative(c.k3))
        return badInput(QStringLiteral("k3 (the time to re-form the world)"), c.k3, seconds);
    // Outside [1, 3] the factor contradicts itself: a checkpoint for every
    // class holds one class's, and costs no more than writing all three.
    if (!(c.singlePointFactor >= 1 && c.singlePointFactor <= 3))
        return badInput(QStringLiteral("singlePointFactor (a single-point checkpoint's cost in k0)"),
                        c.singlePointFactor, QStringLiteral("between 1 and 3"));
    if (auto ok = validateRates(r, QString()); !ok)
        return ok;
    if (!(std::isfinite(runTime) && runTime > 0))
        return badInput(QStringLiteral("the run time T"), runTime, QStringLiteral("a finite number of seconds above 0"));
    return success();
}

double CheckpointPlanner::expectedTimeSinglePoint(double interval, const CheckpointCosts &c, const FailureRates &r,
                                                  double runTime)
{
    if (!validate(c, r, runTime))
        return NaN;
    return runTime * (1 + recoveryRate(c, r) + overheadRate(c.singlePointFactor * c.k0, totalRate(r), interval));
}

double CheckpointPlanner::expectedTimeMultiPoint(const ClassIntervals &intervals, const CheckpointCosts &c,
                                                 const FailureRates &r, double runTime)
{
    if (!validate(c, r, runTime))
        return NaN;
    const auto alpha = asArray(r);
    const auto t = asArray(intervals);
    double overhead = 0;
    for (int i = 0; i < 3; ++i)
        overhead += overheadRate(c.k0, alpha[i], t[i]);
    return runTime * (1 + recoveryRate(c, r) + overhead);
}

Result<CheckpointPlanner::Plan> CheckpointPlanner::singlePoint(const CheckpointCosts &c, const FailureRates &r,
                                                               double runTime)
{
    if (auto ok = validate(c, r, runTime); !ok)
        return ok.error();
    const double lambda = totalRate(r);
    const double write = c.singlePointFactor * c.k0;
    Plan plan;
    plan.strategy = Strategy::SinglePoint;
    // With no failures any checkpoint is pure cost, whatever k0 is.
    plan.interval = lambda == 0 ? Infinity : std::sqrt(2 * write / lambda);
    plan.classIntervals = {plan.interval, plan.interval, plan.interval};
    plan.failureRisk = std::sqrt(2 * write * lambda);
    plan.expectedTime = runTime * (1 + recoveryRate(c, r) + plan.failureRisk);
    return plan;
}

Result<CheckpointPlanner::Plan> CheckpointPlanner::multiPoint(const CheckpointCosts &c, const FailureRates &r,
                                                              double runTime)
{
    if (auto ok = validate(c, r, runTime); !ok)
        return ok.error();
    const auto alpha = asArray(r);
    std::array<double, 3> t;
    double risk = 0;
    for (int i = 0; i < 3; ++i) {
        t[i] = alpha[i] == 0 ? Infinity : std::sqrt(2 * c.k0 / alpha[i]);
        risk = std::max(risk, std::sqrt(2 * c.k0 * alpha[i]));
    }
    Plan plan;
    plan.strategy = Strategy::MultiPoint;
    plan.classIntervals = {t[0], t[1], t[2]};
    plan.interval = std::min({t[0], t[1], t[2]});
    plan.failureRisk = risk;
    plan.expectedTime = runTime * (1 + recoveryRate(c, r) + std::sqrt(2 * c.k0) * sumOfRoots(r));
    return plan;
}

Result<CheckpointPlanner::Plan> CheckpointPlanner::best(const CheckpointCosts &c, const FailureRates &r, double runTime)
{
    if (auto ok = validate(c, r, runTime); !ok)
        return ok.error();
    // Decided on the rates, not by comparing expectedTime: the two totals
    // share T·(1 + recovery), which can bury their difference in rounding.
    return singlePointWins(c, r) ? singlePoint(c, r, runTime) : multiPoint(c, r, runTime);
}

double CheckpointPlanner::effectiveClassCount(const FailureRates &r)
{
    const double lambda = totalRate(r);
    if (lambda == 0)
        return 1;
    const double roots = sumOfRoots(r);
    return roots * roots / lambda;
}

// ---- Adaptive mode

CheckpointPlanner::CheckpointPlanner(const CheckpointCosts &guess, double runTime)
    : m_singlePointFactor(guess.singlePointFactor)
    , m_runTime(runTime)
    , m_priorRates{1 / DefaultPriorExposure, 1 / DefaultPriorExposure, 1 / DefaultPriorExposure}
{
    m_k[0].value = guess.k0;
    m_k[1].value = guess.k1;
    m_k[2].value = guess.k2;
    m_k[3].value = guess.k3;
}

// A plain mean while samples are few, so neither the guess nor the first
// sample outweighs the rest; then exponential smoothing, because a write's
// time drifts during a run (the state grows, the storage fills) and the
// plan should follow the last few writes, not the average since the start.
// Gain 1/8 as World's smoothed round trip (RFC 6298).
void CheckpointPlanner::Estimate::add(double sample)
{
    ++samples;
    const double gain = std::max(1.0 / double(samples), 1.0 / WarmUpSamples);
    value += gain * (sample - value);
}

void CheckpointPlanner::record(int which, const char *what, double seconds)
{
    if (!finiteNonNegative(seconds)) {
        qCWarning(lcFt) << "checkpoint planner: ignoring" << what << "of" << seconds << "s";
        return;
    }
    m_k[which].add(seconds);
}

void CheckpointPlanner::recordCheckpointWrite(double seconds) { record(0, "a checkpoint write", seconds); }
void CheckpointPlanner::recordRestore(double seconds) { record(1, "a restore", seconds); }
void CheckpointPlanner::recordReconnect(double seconds) { record(2, "a reconnection", seconds); }
void CheckpointPlanner::recordWorldFormation(double seconds) { record(3, "a world formation", seconds); }

void CheckpointPlanner::recordFailure(World::FailureClass failureClass) { ++m_failures[indexOf(failureClass)]; }

void CheckpointPlanner::recordRunTime(double seconds)
{
    if (!finiteNonNegative(seconds)) {
        qCWarning(lcFt) << "checkpoint planner: ignoring a run time of" << seconds << "s";
        return;
    }
    m_exposure += seconds;
}

Result<void> CheckpointPlanner::setFailurePrior(const FailureRates &rates, double exposure)
{
    if (auto ok = validateRates(rates, QStringLiteral("prior's ")); !ok)
        return ok;
    // Zero exposure would leave the rates 0/0 until something is recorded.
    if (!(std::isfinite(exposure) && exposure > 0))
        return badInput(QStringLiteral("the prior's exposure"), exposure,
                        QStringLiteral("a finite number of seconds above 0"));
    m_priorRates = rates;
    m_priorExposure = exposure;
    return success();
}

CheckpointCosts CheckpointPlanner::costs() const
{
    return {m_k[0].value, m_k[1].value, m_k[2].value, m_k[3].value, m_singlePointFactor};
}

FailureRates CheckpointPlanner::rates() const
{
    const auto prior = asArray(m_priorRates);
    const double exposure = m_exposure + m_priorExposure;
    return {(double(m_failures[0]) + prior[0] * m_priorExposure) / exposure,
            (double(m_failures[1]) + prior[1] * m_priorExposure) / exposure,
            (double(m_failures[2]) + prior[2] * m_priorExposure) / exposure};
}

qint64 CheckpointPlanner::failures(World::FailureClass failureClass) const
{
    return m_failures[indexOf(failureClass)];
}

Result<CheckpointPlanner::Plan> CheckpointPlanner::currentPlan() const
{
    return best(costs(), rates(), m_runTime);
}

namespace {

Result<double> remaining(double interval, double secondsSinceLast)
{
    if (!finiteNonNegative(secondsSinceLast))
        return badInput(QStringLiteral("the time since the last checkpoint"), secondsSinceLast,
                        QStringLiteral("a finite number of seconds, 0 or more"));
    return std::max(0.0, interval - secondsSinceLast);
}

} // namespace

Result<double> CheckpointPlanner::nextCheckpointIn(double secondsSinceLast) const
{
    auto plan = currentPlan();
    if (!plan)
        return plan.error();
    return remaining(plan->interval, secondsSinceLast);
}

Result<double> CheckpointPlanner::nextCheckpointIn(World::FailureClass failureClass, double secondsSinceLast) const
{
    auto plan = currentPlan();
    if (!plan)
        return plan.error();
    return remaining(asArray(plan->classIntervals)[indexOf(failureClass)], secondsSinceLast);
}

} // namespace mmpi
