// mmpi::CheckpointPlanner: when to checkpoint. Closed forms for single- and
// multi-point checkpointing from the MMPI paper's cost model, re-derived in
// docs/design/checkpoint-planning.md, and an adaptive mode that learns costs and rates.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/world/world.h>

#include <QObject>

#include <array>
#include <limits>

namespace mmpi {

// The times the model charges, in seconds (docs/design/checkpoint-planning.md#model).
struct CheckpointCosts
{
    double k0 = 0; // write one checkpoint
    double k1 = 0; // read and restore one (every recovery)
    double k2 = 0; // restore the links (a RANGE recovery, before k1)
    double k3 = 0; // re-form the world (a NODETERM recovery, before k1)
    // A single-point checkpoint has to serve the recovery of every class, so
    // it may cost more than one made for a single class: singlePointFactor·k0.
    // 1 when one snapshot serves all (CheckpointStore writes the whole state);
    // the paper's own equations charge 3 (one checkpoint per class). Between
    // 1 and 3: never cheaper than a class's own, never dearer than all three.
    double singlePointFactor = 1;
};

// Failures per second of computation, per class (World::FailureClass), for
// the whole world: any member's failure makes the computation recover.
struct FailureRates
{
    double normal = 0;
    double range = 0;
    double nodeTerm = 0;
};

// Seconds of computation between checkpoints, per failure class.
struct ClassIntervals
{
    double normal = std::numeric_limits<double>::infinity();
    double range = std::numeric_limits<double>::infinity();
    double nodeTerm = std::numeric_limits<double>::infinity();
};

class CheckpointPlanner
{
    Q_GADGET
public:
    enum class Strategy {
        SinglePoint, // one interval; a failure of any class rolls back to the last checkpoint
        MultiPoint,  // each class its own interval and checkpoints (paper §2.2)
    };
    Q_ENUM(Strategy)

    struct Plan
    {
        Strategy strategy = Strategy::SinglePoint;
        // Seconds of computation between checkpoints; for MultiPoint the
        // shortest class interval. Infinity: no checkpoint is worth its cost
        // (no failures expected); 0: checkpoints are free, take them always.
        double interval = std::numeric_limits<double>::infinity();
        ClassIntervals classIntervals; // SinglePoint: all equal to interval
        // Expected wall time of a run holding `runTime` seconds of computation.
        double expectedTime = 0;
        // The largest alpha·t of the plan: the chance of a failure within one
        // interval. The model is first order in it, so trust the plan while it
        // is well below 1: at 0.1 the overhead (expectedTime - runTime) comes
        // out about 7 % low, because failures during writes and rework and two
        // failures in one interval, which the model ignores, start to count.
        double failureRisk = 0;
    };

    // ---- The model (first order in alpha·t). NaN for inputs out of range.
    // Expected wall time of `runTime` seconds of computation checkpointed
    // every `interval` seconds (single-point).
    static double expectedTimeSinglePoint(double interval, const CheckpointCosts &costs,
                                          const FailureRates &rates, double runTime);
    // The same with each class checkpointed on its own interval (multi-point).
    static double expectedTimeMultiPoint(const ClassIntervals &intervals, const CheckpointCosts &costs,
                                         const FailureRates &rates, double runTime);

    // ---- Their minima in closed form. BadConfiguration, naming the input,
    // for a negative, infinite or NaN time or rate, runTime <= 0, or a
    // singlePointFactor outside [1, 3].
    static Result<Plan> singlePoint(const CheckpointCosts &costs, const FailureRates &rates, double runTime);
    static Result<Plan> multiPoint(const CheckpointCosts &costs, const FailureRates &rates, double runTime);
    // The cheaper of the two: single-point unless singlePointFactor exceeds
    // effectiveClassCount(rates). Ties go to single-point (one timer).
    static Result<Plan> best(const CheckpointCosts &costs, const FailureRates &rates, double runTime);
    // (sum of sqrt(alpha))^2 / sum of alpha: between 1 (one class fails) and
    // the number of classes that fail (at equal rates); 1 when none fails.
    static double effectiveClassCount(const FailureRates &rates);
    static Result<void> validate(const CheckpointCosts &costs, const FailureRates &rates, double runTime);

    // ---- Adaptive mode: the plan for the costs and rates seen so far.
    // `guess` stands for the costs until they are measured; `runTime` is the
    // computation the run is expected to hold (it scales expectedTime only).
    CheckpointPlanner(const CheckpointCosts &guess, double runTime);

    void setRunTime(double seconds) { m_runTime = seconds; }
    double runTime() const { return m_runTime; }

    // Measured times (CheckpointStore::checkpointed/restored give k0 and k1).
    // Each estimate is the plain mean of its first 8 samples, then an
    // exponentially smoothed mean with gain 1/8. Negative or non-finite
    // samples are ignored with a warning.
    void recordCheckpointWrite(double seconds);
    void recordRestore(double seconds);
    void recordReconnect(double seconds);
    void recordWorldFormation(double seconds);

    // One failure that made the computation recover: count an episode once,
    // by the class it ended with (a Normal raised to Range is one Range).
    void recordFailure(World::FailureClass failureClass);
    // The computation ran `seconds` more: the exposure the rates divide by.
    void recordRunTime(double seconds);

    // The Gamma prior of every rate: the posterior mean is
    // (failures + rate·exposure) / (seen exposure + exposure), as if `exposure`
    // seconds had been watched and had shown rate·exposure failures.
    // Default: one failure of each class per 4 hours, worth 4 hours.
    Result<void> setFailurePrior(const FailureRates &rates, double exposure);

    CheckpointCosts costs() const;
    FailureRates rates() const;
    qint64 failures(World::FailureClass failureClass) const;
    double exposure() const { return m_exposure; }

    Result<Plan> currentPlan() const;
    // Seconds of computation until the next checkpoint is due, given those
    // since the last one: 0 when due, infinity when none is needed. The
    // first uses Plan::interval; the second a class's interval (MultiPoint).
    Result<double> nextCheckpointIn(double secondsSinceLast) const;
    Result<double> nextCheckpointIn(World::FailureClass failureClass, double secondsSinceLast) const;

    static constexpr int WarmUpSamples = 8;
    static constexpr double DefaultPriorExposure = 4 * 3600.0;

private:
    // k0..k3, measured.
    struct Estimate
    {
        double value = 0;
        qint64 samples = 0;
        void add(double sample);
    };
    void record(int which, const char *what, double seconds);

    std::array<Estimate, 4> m_k;
    double m_singlePointFactor = 1;
    double m_runTime = 0;
    FailureRates m_priorRates;
    double m_priorExposure = DefaultPriorExposure;
    std::array<qint64, 3> m_failures{};
    double m_exposure = 0;
};

} // namespace mmpi
