// CheckpointPlanner: the closed forms against numerical minimisation of the
// cost functions, where the strategy choice flips, the paper's simple case,
// bad inputs, and the adaptive estimates (docs/design/checkpoint-planning.md).
#include <mmpi/ft/checkpointplanner.h>

#include <QRegularExpression>
#include <QTest>

#include <cmath>
#include <functional>
#include <limits>

using namespace mmpi;
using Strategy = CheckpointPlanner::Strategy;
using Plan = CheckpointPlanner::Plan;

Q_DECLARE_METATYPE(mmpi::CheckpointCosts)
Q_DECLARE_METATYPE(mmpi::FailureRates)

namespace {

constexpr double Eps = std::numeric_limits<double>::epsilon();
constexpr double Inf = std::numeric_limits<double>::infinity();
// The bracket of every numerical search, in seconds. Wide enough that each
// optimum of the parameter grid lies deep inside it, so an argmin at its top
// edge can only mean "no checkpoint" (interval infinity).
constexpr double SearchLow = 1e-6;
constexpr double SearchHigh = 1e13;

struct Minimum
{
    double u = 0;     // ln t at the minimum
    double value = 0; // f there
    double tolU = 0;  // how well rounding lets u be located (see minimise())
    bool atTop = false;
};

// Minimises f(t) over [SearchLow, SearchHigh] without assuming anything about
// its shape beyond continuity: a grid of 600 points in ln t finds the best
// cell, golden-section search refines within its two neighbours.
//
// Tolerance: near its minimum f(u) = f* + f''·(u - u*)²/2, and f is computed
// with a relative rounding error of a few eps. Every u with
// f''·(u - u*)²/2 < 4·eps·f* looks as good as u*, so u* cannot be located
// better than sqrt(8·eps·f*/f''). f'' is measured by a finite difference at
// the minimum found, independently of any closed form, and the tolerance is
// 4 times that bound: at least a factor 4 of margin, and never tighter than
// the search can deliver, so the comparison is deterministic.
Minimum minimise(const std::function<double(double)> &f)
{
    const double lo = std::log(SearchLow), hi = std::log(SearchHigh);
    const int n = 600;
    const double step = (hi - lo) / n;
    int bestIndex = 0;
    double bestValue = Inf;
    for (int i = 0; i <= n; ++i) {
        const double v = f(std::exp(lo + i * step));
        // Ties go to the longer interval: a cost that only falls (a class that
        // never fails) goes flat within rounding long before the top edge.
        if (v <= bestValue) {
            bestValue = v;
            bestIndex = i;
        }
    }
    Minimum m;
    if (bestIndex == n) {
        m.atTop = true;
        m.u = hi;
        m.value = bestValue;
        return m;
    }
    double a = lo + std::max(0, bestIndex - 1) * step;
    double b = lo + std::min(n, bestIndex + 1) * step;
    const double g = (std::sqrt(5.0) - 1) / 2;
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = f(std::exp(c)), fd = f(std::exp(d));
    for (int i = 0; i < 200 && b - a > 1e-13; ++i) {
        if (fc <= fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(std::exp(c));
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(std::exp(d));
        }
    }
    m.u = (a + b) / 2;
    m.value = std::min({fc, fd, f(std::exp(m.u))});
    const double h = 1e-2;
    const double curvature = (f(std::exp(m.u + h)) - 2 * f(std::exp(m.u)) + f(std::exp(m.u - h))) / (h * h);
    m.tolU = 4 * std::sqrt(8 * Eps * m.value / std::max(curvature, 1e-300)) + 1e-9;
    return m;
}

double rateSum(const FailureRates &r) { return r.normal + r.range + r.nodeTerm; }

// The model written out from the paper's case analysis (docs §Model), not
// from the library's algebra: per interval of t seconds of work ending in a
// checkpoint of cost w, no failure with probability 1 - Λt, else a failure of
// class i with probability α_i·t, costing its recovery R_i and on average
// half the interval again; T/t intervals.
double caseAnalysisSinglePoint(double t, const CheckpointCosts &c, const FailureRates &r, double T)
{
    const double w = c.singlePointFactor * c.k0;
    const double R[3] = {c.k1, c.k2 + c.k1, c.k3 + c.k1};
    const double a[3] = {r.normal, r.range, r.nodeTerm};
    double perInterval = (1 - rateSum(r) * t) * (w + t);
    for (int i = 0; i < 3; ++i)
        perInterval += a[i] * t * (w + t + R[i] + t / 2);
    return T / t * perInterval;
}

// Multi-point: class i's own checkpoints every t_i, each costing k0; its
// failures roll back to them. The work T is done once (not once per class).
double caseAnalysisMultiPoint(const double t[3], const CheckpointCosts &c, const FailureRates &r, double T)
{
    const double R[3] = {c.k1, c.k2 + c.k1, c.k3 + c.k1};
    const double a[3] = {r.normal, r.range, r.nodeTerm};
    double total = T;
    for (int i = 0; i < 3; ++i)
        total += T / t[i] * (c.k0 + a[i] * t[i] * (R[i] + t[i] / 2));
    return total;
}

struct NumericPlan
{
    double single = 0, multi = 0; // minimal expected times
};

// Both strategies minimised numerically. The multi-point cost is minimised
// by coordinate descent over the three intervals, two sweeps (one suffices if
// the function is separable, which the test does not take for granted).
NumericPlan numericMinima(const CheckpointCosts &c, const FailureRates &r, double T)
{
    NumericPlan p;
    p.single = minimise([&](double t) { return CheckpointPlanner::expectedTimeSinglePoint(t, c, r, T); }).value;
    ClassIntervals t{1, 1, 1};
    double *coord[3] = {&t.normal, &t.range, &t.nodeTerm};
    for (int sweep = 0; sweep < 2; ++sweep)
        for (double *x : coord) {
            const Minimum m = minimise([&](double v) {
                const double saved = *x;
                *x = v;
                const double e = CheckpointPlanner::expectedTimeMultiPoint(t, c, r, T);
                *x = saved;
                return e;
            });
            *x = std::exp(m.u);
            p.multi = m.value;
        }
    return p;
}

Plan planOf(Result<Plan> result)
{
    if (!result)
        qFatal("unexpected error: %s", qPrintable(result.error().toString()));
    return result.value();
}

bool relativelyClose(double a, double b, double tol) { return std::abs(a - b) <= tol * std::max(std::abs(a), std::abs(b)); }

} // namespace

class TestCheckpointPlanner : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void modelMatchesCaseAnalysis();
    void closedFormsMatchNumericalMinima();
    void paperSimpleCase();
    void paperEquationsAsCorrected();
    void flipInSinglePointFactor();
    void flipsTwiceInNormalRate();
    void noFlipInRunTime();
    void paperThresholdLiesBeyondTheRun();
    void degenerateInputs();
    void badInputs_data();
    void badInputs();
    void costEstimates();
    void badSamplesIgnored();
    void failureRatePrior();
    void failureRatesConverge();
    void adaptivePlan();
};

void TestCheckpointPlanner::modelMatchesCaseAnalysis()
{
    const CheckpointCosts c{0.7, 2.5, 4, 19, 2};
    const FailureRates r{3e-4, 1e-4, 2e-5};
    const double T = 5000;
    for (double t : {0.5, 10.0, 73.0, 400.0, 2000.0}) {
        QVERIFY2(relativelyClose(CheckpointPlanner::expectedTimeSinglePoint(t, c, r, T),
                                 caseAnalysisSinglePoint(t, c, r, T), 1e-12),
                 qPrintable(QString::number(t)));
        const double ts[3] = {t, 2 * t, 5 * t};
        QVERIFY(relativelyClose(CheckpointPlanner::expectedTimeMultiPoint({ts[0], ts[1], ts[2]}, c, r, T),
                                caseAnalysisMultiPoint(ts, c, r, T), 1e-12));
    }
}

void TestCheckpointPlanner::closedFormsMatchNumericalMinima()
{
    const double alphas[] = {0, 1e-6, 1e-4, 1e-2};
    const double T = 1e4;
    int cases = 0;
    double worstTolU = 0;
    for (double k0 : {1e-3, 0.1, 10.0, 300.0})
        for (double k1 : {0.01, 5.0})
            for (double k2 : {0.0, 2.0})
                for (double m : {1.0, 2.0, 3.0})
                    for (double a0 : alphas)
                        for (double a1 : alphas)
                            for (double a2 : alphas) {
                                if (a0 + a1 + a2 == 0)
                                    continue;
                                const CheckpointCosts c{k0, k1, k2, 20, m};
                                const FailureRates r{a0, a1, a2};
                                const QByteArray where = QStringLiteral("k0=%1 k1=%2 k2=%3 m=%4 a=(%5,%6,%7)")
                                                             .arg(k0).arg(k1).arg(k2).arg(m).arg(a0).arg(a1).arg(a2)
                                                             .toUtf8();
                                ++cases;

                                const Plan s = planOf(CheckpointPlanner::singlePoint(c, r, T));
                                const Minimum ms = minimise([&](double t) {
                                    return CheckpointPlanner::expectedTimeSinglePoint(t, c, r, T);
                                });
                                QVERIFY2(!ms.atTop, where.constData());
                                worstTolU = std::max(worstTolU, ms.tolU);
                                QVERIFY2(std::abs(std::log(s.interval) - ms.u) <= ms.tolU, where.constData());
                                // The closed form's value is the minimum: not above what the
                                // search found, and the search gets within rounding of it.
                                // Within the rounding-flat zone around the optimum the computed
                                // cost varies by a few eps (see minimise()): 16 eps of slack.
                                QVERIFY2(s.expectedTime <= ms.value * (1 + 8 * Eps), where.constData());
                                QVERIFY2(relativelyClose(s.expectedTime, ms.value, 16 * Eps), where.constData());
                                QVERIFY2(relativelyClose(s.expectedTime,
                                                         CheckpointPlanner::expectedTimeSinglePoint(s.interval, c, r, T),
                                                         8 * Eps),
                                         where);

                                const Plan mp = planOf(CheckpointPlanner::multiPoint(c, r, T));
                                const double closed[3] = {mp.classIntervals.normal, mp.classIntervals.range,
                                                          mp.classIntervals.nodeTerm};
                                const double a[3] = {a0, a1, a2};
                                // The other two intervals held at their closed forms, each
                                // class's interval minimised on its own ...
                                for (int i = 0; i < 3; ++i) {
                                    const Minimum mi = minimise([&](double t) {
                                        double x[3] = {closed[0], closed[1], closed[2]};
                                        x[i] = t;
                                        return CheckpointPlanner::expectedTimeMultiPoint({x[0], x[1], x[2]}, c, r, T);
                                    });
                                    if (a[i] == 0) {
                                        QVERIFY2(mi.atTop && std::isinf(closed[i]), where.constData());
                                        continue;
                                    }
                                    QVERIFY2(!mi.atTop, where.constData());
                                    worstTolU = std::max(worstTolU, mi.tolU);
                                    QVERIFY2(std::abs(std::log(closed[i]) - mi.u) <= mi.tolU, where.constData());
                                }
                                // ... and all three together from a start far from the optimum.
                                const NumericPlan num = numericMinima(c, r, T);
                                // With a class that never fails the search stops at its top
                                // edge, SearchHigh, where k0·T/SearchHigh is still charged.
                                QVERIFY2(mp.expectedTime <= num.multi * (1 + 8 * Eps), where.constData());
                                QVERIFY2(num.multi - mp.expectedTime <= 16 * Eps * num.multi + 3 * k0 * T / SearchHigh,
                                         where.constData());
                                QVERIFY2(relativelyClose(mp.expectedTime,
                                                         CheckpointPlanner::expectedTimeMultiPoint(mp.classIntervals, c, r, T),
                                                         8 * Eps),
                                         where);
                            }
    // The tolerances were meaningful: the intervals were pinned to better than 0.1 %.
    QVERIFY2(worstTolU < 1e-3, qPrintable(QString::number(worstTolU)));
    qInfo("%d parameter sets; the worst interval tolerance was %.2g (relative)", cases, worstTolU);
}

// The Gropp & Lusk case the paper starts from: one failure class.
void TestCheckpointPlanner::paperSimpleCase()
{
    const double T = 36000;
    for (double k0 : {0.05, 1.0, 30.0})
        for (double alpha : {1e-6, 1e-4, 1e-2}) {
            const double k1 = 3, k2 = 7, k3 = 20;
            const CheckpointCosts c{k0, k1, k2, k3};
            const double t = std::sqrt(2 * k0 / alpha);
            // NORMAL only: t0 = sqrt(2k0/α), E = T(1 + αk1 + sqrt(2αk0)) (Lemma 1).
            for (auto plan : {CheckpointPlanner::singlePoint(c, {alpha, 0, 0}, T),
                              CheckpointPlanner::multiPoint(c, {alpha, 0, 0}, T),
                              CheckpointPlanner::best(c, {alpha, 0, 0}, T)}) {
                QVERIFY(relativelyClose(plan->interval, t, 1e-14));
                QVERIFY(relativelyClose(plan->expectedTime, T * (1 + alpha * k1 + std::sqrt(2 * alpha * k0)), 1e-14));
            }
            QCOMPARE(planOf(CheckpointPlanner::best(c, {alpha, 0, 0}, T)).strategy, Strategy::SinglePoint);
            // RANGE only (Lemma 2), NODETERM only (Lemma 4 with k3, corrected).
            QVERIFY(relativelyClose(planOf(CheckpointPlanner::singlePoint(c, {0, alpha, 0}, T)).expectedTime,
                                    T * (1 + alpha * (k1 + k2) + std::sqrt(2 * alpha * k0)), 1e-14));
            QVERIFY(relativelyClose(planOf(CheckpointPlanner::singlePoint(c, {0, 0, alpha}, T)).expectedTime,
                                    T * (1 + alpha * (k1 + k3) + std::sqrt(2 * alpha * k0)), 1e-14));
            // And numerically, so the textbook formula is not merely restated.
            const Minimum m = minimise([&](double x) {
                return CheckpointPlanner::expectedTimeSinglePoint(x, c, {alpha, 0, 0}, T);
            });
            QVERIFY(std::abs(m.u - std::log(t)) <= m.tolU);
        }
}

// Section 2.1 with the slips fixed: with one checkpoint per class at each
// point (factor 3) and no NODETERM, t0 = sqrt(6k0/(α0+α1)) — with α0, not
// the printed α2 — and E = T[1 + α0k1 + α1(k1+k2) + sqrt(6k0(α0+α1))].
void TestCheckpointPlanner::paperEquationsAsCorrected()
{
    const double k0 = 2, k1 = 3, k2 = 5, T = 1e5, a0 = 2e-4, a1 = 5e-5;
    const CheckpointCosts c{k0, k1, k2, 20, 3};
    const Plan s = planOf(CheckpointPlanner::singlePoint(c, {a0, a1, 0}, T));
    QVERIFY(relativelyClose(s.interval, std::sqrt(6 * k0 / (a0 + a1)), 1e-14));
    QVERIFY(!relativelyClose(s.interval, std::sqrt(6 * k0 / (a1 + 0)), 1e-3)); // the printed form
    QVERIFY(relativelyClose(s.expectedTime, T * (1 + a0 * k1 + a1 * (k1 + k2) + std::sqrt(6 * k0 * (a0 + a1))), 1e-14));
    // Multi-point (Lemmas 1, 2): sqrt(2k0/α_i) each; no NODETERM checkpoints.
    const Plan m = planOf(CheckpointPlanner::multiPoint(c, {a0, a1, 0}, T));
    QVERIFY(relativelyClose(m.classIntervals.normal, std::sqrt(2 * k0 / a0), 1e-14));
    QVERIFY(relativelyClose(m.classIntervals.range, std::sqrt(2 * k0 / a1), 1e-14));
    QVERIFY(std::isinf(m.classIntervals.nodeTerm));
    QVERIFY(relativelyClose(m.expectedTime,
                            T * (1 + a0 * k1 + a1 * (k1 + k2) + std::sqrt(2 * k0) * (std::sqrt(a0) + std::sqrt(a1))),
                            1e-14));
}

// Single-point wins iff m·Λ <= (Σ sqrt α_i)². Sweep m across the boundary
// m* = (Σ sqrt α_i)²/Λ, derived here from the rates.
void TestCheckpointPlanner::flipInSinglePointFactor()
{
    const FailureRates r{4e-4, 1e-4, 1e-5};
    const double T = 3600;
    const double roots = std::sqrt(r.normal) + std::sqrt(r.range) + std::sqrt(r.nodeTerm);
    const double mFlip = roots * roots / rateSum(r);
    QVERIFY(mFlip > 2.1 && mFlip < 2.2);
    QVERIFY(relativelyClose(CheckpointPlanner::effectiveClassCount(r), mFlip, 1e-14));
    auto costs = [](double m) { return CheckpointCosts{1.5, 2, 6, 20, m}; };

    for (int i = 0; i <= 40; ++i) {
        const double m = 1 + i * 0.05;
        const Strategy expected = m <= mFlip ? Strategy::SinglePoint : Strategy::MultiPoint;
        QCOMPARE(planOf(CheckpointPlanner::best(costs(m), r, T)).strategy, expected);
        // The numerical minima agree where their difference exceeds rounding.
        if (std::abs(m - mFlip) > 0.01) {
            const NumericPlan n = numericMinima(costs(m), r, T);
            QCOMPARE(n.single < n.multi, m < mFlip);
        }
    }
    // Exactly at the boundary, to a part in 1e9.
    QCOMPARE(planOf(CheckpointPlanner::best(costs(mFlip * (1 - 1e-9)), r, T)).strategy, Strategy::SinglePoint);
    QCOMPARE(planOf(CheckpointPlanner::best(costs(mFlip * (1 + 1e-9)), r, T)).strategy, Strategy::MultiPoint);
    // The numerical cost difference changes sign there too (bisection).
    double lo = 1.5, hi = 2.8;
    for (int i = 0; i < 60; ++i) {
        const double mid = (lo + hi) / 2;
        const NumericPlan n = numericMinima(costs(mid), r, T);
        (n.single <= n.multi ? lo : hi) = mid;
    }
    QVERIFY2(std::abs(lo - mFlip) < 1e-6, qPrintable(QStringLiteral("%1 vs %2").arg(lo, 0, 'g', 12).arg(mFlip, 0, 'g', 12)));
}

// With m = 2 fixed, n_eff(α0) = 2 has two roots: from
// (sqrt α0 + s)² = 2(α0 + L), s = sqrt α1 + sqrt α2, L = α1 + α2,
// α0 = (α1^¼ ∓ α2^¼)⁴. Between them the rates are balanced and one shared
// schedule wins (single-point); outside, one class dominates, its own
// schedule is almost all the protection needed, and multi-point wins.
void TestCheckpointPlanner::flipsTwiceInNormalRate()
{
    const double a1 = 1e-4, a2 = 1e-6, T = 7200;
    const CheckpointCosts c{0.8, 2, 6, 20, 2};
    const double low = std::pow(std::pow(a1, 0.25) - std::pow(a2, 0.25), 4);
    const double high = std::pow(std::pow(a1, 0.25) + std::pow(a2, 0.25), 4);
    for (int i = 0; i <= 60; ++i) {
        const double a0 = std::pow(10.0, -8 + i * 0.1);
        const bool multi = !(a0 > low && a0 < high);
        const FailureRates r{a0, a1, a2};
        QCOMPARE(planOf(CheckpointPlanner::best(c, r, T)).strategy, multi ? Strategy::MultiPoint : Strategy::SinglePoint);
        if (std::abs(std::log(a0 / low)) > 0.02 && std::abs(std::log(a0 / high)) > 0.02) {
            const NumericPlan n = numericMinima(c, r, T);
            QCOMPARE(n.multi < n.single, multi);
        }
    }
    for (double edge : {low, high}) {
        const bool multiBelow = edge == low;
        QCOMPARE(planOf(CheckpointPlanner::best(c, {edge * (1 - 1e-9), a1, a2}, T)).strategy,
                 multiBelow ? Strategy::MultiPoint : Strategy::SinglePoint);
        QCOMPARE(planOf(CheckpointPlanner::best(c, {edge * (1 + 1e-9), a1, a2}, T)).strategy,
                 multiBelow ? Strategy::SinglePoint : Strategy::MultiPoint);
        // Bisection in ln α0 on the numerical cost difference.
        double lo = std::log(edge) - 0.5, hi = std::log(edge) + 0.5;
        auto multiWins = [&](double u) {
            const NumericPlan n = numericMinima(c, {std::exp(u), a1, a2}, T);
            return n.multi < n.single;
        };
        const bool multiAtLo = multiWins(lo);
        QVERIFY(multiAtLo != multiWins(hi));
        for (int i = 0; i < 50; ++i) {
            const double mid = (lo + hi) / 2;
            (multiWins(mid) == multiAtLo ? lo : hi) = mid;
        }
        QVERIFY2(std::abs(lo - std::log(edge)) < 1e-5, qPrintable(QString::number(std::exp(lo) / edge - 1)));
    }
}

// Theorems 6 and 7 put the flip at a run time T; in the model treated
// consistently the choice does not depend on T at all.
void TestCheckpointPlanner::noFlipInRunTime()
{
    for (double m : {1.0, 2.0, 3.0})
        for (const FailureRates &r : {FailureRates{1e-3, 1e-4, 0}, FailureRates{2e-4, 2e-4, 1e-5}}) {
            const CheckpointCosts c{4, 2, 6, 20, m};
            const Strategy first = planOf(CheckpointPlanner::best(c, r, 1)).strategy;
            const NumericPlan n1 = numericMinima(c, r, 1);
            for (double T = 1; T <= 1e8; T *= 10) {
                QCOMPARE(planOf(CheckpointPlanner::best(c, r, T)).strategy, first);
                const NumericPlan n = numericMinima(c, r, T);
                QCOMPARE(n.single <= n.multi, n1.single <= n1.multi);
            }
        }
}

// The paper's threshold (Theorem 6 with its indices fixed),
// T < sqrt(k0) / (sqrt 2 (sqrt(3(α0+α1)) - sqrt α0 - sqrt α1)),
// always lies below its own single-point interval sqrt(6k0/(α0+α1)): the
// single-point plan it prefers there checkpoints less than once per run.
void TestCheckpointPlanner::paperThresholdLiesBeyondTheRun()
{
    for (double k0 : {1e-2, 1.0, 100.0})
        for (double a0 : {0.0, 1e-6, 1e-4, 1e-2})
            for (double a1 : {0.0, 1e-7, 1e-5, 1e-3}) {
                if (a0 + a1 == 0)
                    continue;
                const double gap = std::sqrt(3 * (a0 + a1)) - std::sqrt(a0) - std::sqrt(a1);
                QVERIFY(gap > 0);
                const double threshold = std::sqrt(k0) / (std::sqrt(2.0) * gap);
                const double interval = std::sqrt(6 * k0 / (a0 + a1));
                QVERIFY(threshold < interval);
                // The bound from the docs: the ratio stays below 1/(sqrt 12 (sqrt 3 - sqrt 2)).
                QVERIFY(threshold / interval <= 1 / (std::sqrt(12.0) * (std::sqrt(3.0) - std::sqrt(2.0))) + 1e-12);
            }
}

void TestCheckpointPlanner::degenerateInputs()
{
    const CheckpointCosts c{2, 3, 4, 20, 2};
    const double T = 1000;
    // Nothing fails: no checkpoint is worth writing, the run takes T.
    for (auto plan : {CheckpointPlanner::singlePoint(c, {}, T), CheckpointPlanner::multiPoint(c, {}, T),
                      CheckpointPlanner::best(c, {}, T)}) {
        QVERIFY(plan);
        QVERIFY(std::isinf(plan->interval));
        QCOMPARE(plan->expectedTime, T);
        QCOMPARE(plan->failureRisk, 0.0);
    }
    QCOMPARE(planOf(CheckpointPlanner::best(c, {}, T)).strategy, Strategy::SinglePoint);
    QCOMPARE(CheckpointPlanner::expectedTimeSinglePoint(Inf, c, {}, T), T);
    QCOMPARE(CheckpointPlanner::expectedTimeMultiPoint({}, c, {}, T), T);
    // Free checkpoints: take them continuously; only the recoveries cost.
    const CheckpointCosts free{0, 3, 4, 20, 1};
    const FailureRates r{1e-3, 1e-3, 1e-3};
    for (auto plan : {CheckpointPlanner::singlePoint(free, r, T), CheckpointPlanner::multiPoint(free, r, T)}) {
        QCOMPARE(plan->interval, 0.0);
        QVERIFY(relativelyClose(plan->expectedTime, T * (1 + 1e-3 * (3 + 7 + 23)), 1e-14));
    }
    QCOMPARE(planOf(CheckpointPlanner::best(free, r, T)).strategy, Strategy::SinglePoint);
    QVERIFY(relativelyClose(CheckpointPlanner::expectedTimeSinglePoint(0, free, r, T), T * (1 + 1e-3 * 33), 1e-14));
    // A negative or NaN interval has no expected time.
    QVERIFY(std::isnan(CheckpointPlanner::expectedTimeSinglePoint(-1, c, r, T)));
    QVERIFY(std::isnan(CheckpointPlanner::expectedTimeSinglePoint(std::nan(""), c, r, T)));
    QVERIFY(std::isnan(CheckpointPlanner::expectedTimeMultiPoint({1, -1, 1}, c, r, T)));
}

void TestCheckpointPlanner::badInputs_data()
{
    QTest::addColumn<CheckpointCosts>("costs");
    QTest::addColumn<FailureRates>("rates");
    QTest::addColumn<double>("runTime");
    QTest::addColumn<QString>("named");

    const CheckpointCosts c{1, 2, 3, 20, 1};
    const FailureRates r{1e-4, 1e-4, 1e-5};
    const double nan = std::nan(""), T = 100;
    for (double bad : {-1.0, nan, Inf}) {
        const QByteArray v = QByteArray::number(bad);
        QTest::addRow("k0 %s", v.data()) << CheckpointCosts{bad, 2, 3, 20, 1} << r << T << "k0 (";
        QTest::addRow("k1 %s", v.data()) << CheckpointCosts{1, bad, 3, 20, 1} << r << T << "k1 (";
        QTest::addRow("k2 %s", v.data()) << CheckpointCosts{1, 2, bad, 20, 1} << r << T << "k2 (";
        QTest::addRow("k3 %s", v.data()) << CheckpointCosts{1, 2, 3, bad, 1} << r << T << "k3 (";
        QTest::addRow("factor %s", v.data()) << CheckpointCosts{1, 2, 3, 20, bad} << r << T << "singlePointFactor";
        QTest::addRow("normal %s", v.data()) << c << FailureRates{bad, 1e-4, 1e-5} << T << "NORMAL failure rate";
        QTest::addRow("range %s", v.data()) << c << FailureRates{1e-4, bad, 1e-5} << T << "RANGE failure rate";
        QTest::addRow("nodeterm %s", v.data()) << c << FailureRates{1e-4, 1e-4, bad} << T << "NODETERM failure rate";
        QTest::addRow("T %s", v.data()) << c << r << bad << "run time T";
    }
    QTest::newRow("T 0") << c << r << 0.0 << "run time T";
    QTest::newRow("factor 0.5") << CheckpointCosts{1, 2, 3, 20, 0.5} << r << T << "singlePointFactor";
    QTest::newRow("factor 3.5") << CheckpointCosts{1, 2, 3, 20, 3.5} << r << T << "singlePointFactor";
}

void TestCheckpointPlanner::badInputs()
{
    QFETCH(CheckpointCosts, costs);
    QFETCH(FailureRates, rates);
    QFETCH(double, runTime);
    QFETCH(QString, named);
    for (auto plan : {CheckpointPlanner::singlePoint(costs, rates, runTime),
                      CheckpointPlanner::multiPoint(costs, rates, runTime),
                      CheckpointPlanner::best(costs, rates, runTime)}) {
        QVERIFY(!plan);
        QCOMPARE(plan.error().code, ErrorCode::BadConfiguration);
        QVERIFY2(plan.error().message.contains(named), qPrintable(plan.error().message));
    }
    QVERIFY(std::isnan(CheckpointPlanner::expectedTimeSinglePoint(10, costs, rates, runTime)));
    QVERIFY(std::isnan(CheckpointPlanner::expectedTimeMultiPoint({10, 10, 10}, costs, rates, runTime)));
    // The planner reports its bad configuration the same way.
    CheckpointPlanner planner(costs, runTime);
    if (std::isfinite(rates.normal) && rates.normal >= 0 && std::isfinite(rates.range) && rates.range >= 0
        && std::isfinite(rates.nodeTerm) && rates.nodeTerm >= 0) {
        QVERIFY(!planner.currentPlan());
        QCOMPARE(planner.currentPlan().error().code, ErrorCode::BadConfiguration);
        QVERIFY(!planner.nextCheckpointIn(0));
    } else {
        const auto prior = planner.setFailurePrior(rates, 3600);
        QVERIFY(!prior);
        QVERIFY2(prior.error().message.contains(QStringLiteral("prior's ") + named), qPrintable(prior.error().message));
    }
}

void TestCheckpointPlanner::costEstimates()
{
    const CheckpointCosts guess{10, 20, 30, 40, 1};
    CheckpointPlanner planner(guess, 3600);
    QCOMPARE(planner.costs().k0, 10.0);
    QCOMPARE(planner.costs().k3, 40.0);

    // The first 8 writes: their plain mean; the guess no longer counts.
    for (int i = 1; i <= CheckpointPlanner::WarmUpSamples; ++i)
        planner.recordCheckpointWrite(i);
    QVERIFY(relativelyClose(planner.costs().k0, 4.5, 1e-14));
    // Then smoothing with gain 1/8 (a running mean would give 5.0).
    planner.recordCheckpointWrite(20.5);
    QVERIFY(relativelyClose(planner.costs().k0, 4.5 + (20.5 - 4.5) / 8, 1e-14));
    // It follows a drift: after a step from 1 s to 2 s, 8 writes close all
    // but (7/8)^8 of the gap; a mean over the run would still be near 1.
    for (int i = 0; i < 400; ++i)
        planner.recordCheckpointWrite(1);
    QVERIFY(std::abs(planner.costs().k0 - 1) < 1e-15);
    for (int i = 0; i < 8; ++i)
        planner.recordCheckpointWrite(2);
    QVERIFY(relativelyClose(planner.costs().k0, 2 - std::pow(7.0 / 8, 8), 1e-12));

    // Each cost has its own estimate.
    planner.recordRestore(3);
    planner.recordRestore(5);
    planner.recordReconnect(7);
    planner.recordWorldFormation(18);
    planner.recordWorldFormation(20);
    planner.recordWorldFormation(22);
    QCOMPARE(planner.costs().k1, 4.0);
    QCOMPARE(planner.costs().k2, 7.0);
    QCOMPARE(planner.costs().k3, 20.0);
    QCOMPARE(planner.costs().singlePointFactor, 1.0);
}

void TestCheckpointPlanner::badSamplesIgnored()
{
    CheckpointPlanner planner({1, 2, 3, 4}, 3600);
    planner.recordCheckpointWrite(2);
    const QRegularExpression warning(QStringLiteral("^checkpoint planner: ignoring"));
    for (int i = 0; i < 4; ++i)
        QTest::ignoreMessage(QtWarningMsg, warning);
    planner.recordCheckpointWrite(-1);
    planner.recordRestore(std::nan(""));
    planner.recordWorldFormation(Inf);
    planner.recordRunTime(-5);
    QCOMPARE(planner.costs().k0, 2.0);
    QCOMPARE(planner.costs().k1, 2.0);
    QCOMPARE(planner.costs().k3, 4.0);
    QCOMPARE(planner.exposure(), 0.0);
}

void TestCheckpointPlanner::failureRatePrior()
{
    CheckpointPlanner planner({1, 2, 3, 20}, 3600);
    // Before any failure: the prior, one of each class per 4 hours.
    const double b = CheckpointPlanner::DefaultPriorExposure;
    QCOMPARE(b, 14400.0);
    QVERIFY(relativelyClose(planner.rates().normal, 1 / b, 1e-15));
    QVERIFY(relativelyClose(planner.rates().range, 1 / b, 1e-15));
    QVERIFY(relativelyClose(planner.rates().nodeTerm, 1 / b, 1e-15));
    // It checkpoints before the first failure (an estimate of 0 would not).
    const Plan first = planOf(planner.currentPlan());
    QVERIFY(relativelyClose(first.interval, std::sqrt(2 * 1 / (3 / b)), 1e-14));

    // Failure-free hours lower the rates: 1/(b + S).
    planner.recordRunTime(b);
    QVERIFY(relativelyClose(planner.rates().normal, 1 / (2 * b), 1e-15));
    QVERIFY(planOf(planner.currentPlan()).interval > first.interval);
    // One failure counts as much as the prior's pseudo-failure.
    planner.recordFailure(World::FailureClass::Range);
    QCOMPARE(planner.failures(World::FailureClass::Range), qint64(1));
    QVERIFY(relativelyClose(planner.rates().range, 2 / (2 * b), 1e-15));
    QVERIFY(relativelyClose(planner.rates().nodeTerm, 1 / (2 * b), 1e-15));

    // Another prior.
    QVERIFY(planner.setFailurePrior({1e-3, 0, 2e-4}, 1000));
    QVERIFY(relativelyClose(planner.rates().normal, 1.0 / (b + 1000), 1e-15));
    QVERIFY(relativelyClose(planner.rates().range, 1 / (b + 1000), 1e-15));
    QVERIFY(relativelyClose(planner.rates().nodeTerm, 0.2 / (b + 1000), 1e-15));
    const auto zero = planner.setFailurePrior({1e-3, 0, 0}, 0);
    QVERIFY(!zero);
    QVERIFY(zero.error().message.contains(QStringLiteral("prior's exposure")));
}

void TestCheckpointPlanner::failureRatesConverge()
{
    CheckpointPlanner planner({1, 2, 3, 20}, 3600);
    const double truth[3] = {1e-3, 2e-4, 1e-5};
    const World::FailureClass classes[3] = {World::FailureClass::Normal, World::FailureClass::Range,
                                            World::FailureClass::NodeTerm};
    // 10^7 s in 1000 s slices, failures spread evenly at the true rates.
    qint64 counted[3] = {};
    double S = 0;
    for (int slice = 0; slice < 10000; ++slice) {
        planner.recordRunTime(1000);
        S += 1000;
        for (int i = 0; i < 3; ++i)
            while (counted[i] < qint64(std::floor(truth[i] * S + 1e-9))) {
                planner.recordFailure(classes[i]);
                ++counted[i];
            }
    }
    QCOMPARE(planner.exposure(), 1e7);
    const double b = CheckpointPlanner::DefaultPriorExposure;
    const double est[3] = {planner.rates().normal, planner.rates().range, planner.rates().nodeTerm};
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(planner.failures(classes[i]), counted[i]);
        QVERIFY(relativelyClose(est[i], (counted[i] + 1) / (S + b), 1e-14));
        // The prior's pull is gone: within 1 % (the rarest class has 100 failures).
        QVERIFY2(std::abs(est[i] / truth[i] - 1) < 0.01, qPrintable(QString::number(est[i] / truth[i] - 1)));
    }
}

void TestCheckpointPlanner::adaptivePlan()
{
    CheckpointPlanner planner({5, 2, 6, 20, 1}, 3600);
    planner.recordCheckpointWrite(0.4);
    planner.recordCheckpointWrite(0.6);
    planner.recordRunTime(36000 - CheckpointPlanner::DefaultPriorExposure);
    for (int i = 0; i < 9; ++i)
        planner.recordFailure(World::FailureClass::Normal);
    // Rates now 10, 1 and 1 per 36000 s; k0 = 0.5 s.
    const double lambda = 12.0 / 36000;
    const Plan plan = planOf(planner.currentPlan());
    QCOMPARE(plan.strategy, Strategy::SinglePoint);
    QVERIFY(relativelyClose(plan.interval, std::sqrt(2 * 0.5 / lambda), 1e-14));
    QVERIFY(relativelyClose(plan.failureRisk, std::sqrt(2 * 0.5 * lambda), 1e-14));
    QVERIFY(relativelyClose(*planner.nextCheckpointIn(0), plan.interval, 1e-15));
    QVERIFY(relativelyClose(*planner.nextCheckpointIn(plan.interval / 4), 0.75 * plan.interval, 1e-15));
    QCOMPARE(*planner.nextCheckpointIn(plan.interval + 1), 0.0);
    QVERIFY(!planner.nextCheckpointIn(-1));
    // The run time scales the expected time, not the interval.
    planner.setRunTime(7200);
    QVERIFY(relativelyClose(planOf(planner.currentPlan()).expectedTime, 2 * plan.expectedTime, 1e-14));
    QCOMPARE(planOf(planner.currentPlan()).interval, plan.interval);

    // A combined checkpoint costing 3 class ones (the paper's accounting),
    // rates unbalanced enough (n_eff = (2+1+1)^2/6 = 2.67 < 3): multi-point,
    // a timer per class.
    CheckpointPlanner multi({0.5, 2, 6, 20, 3}, 3600);
    multi.recordRunTime(36000 - CheckpointPlanner::DefaultPriorExposure);
    for (int i = 0; i < 3; ++i)
        multi.recordFailure(World::FailureClass::Normal);
    const Plan m = planOf(multi.currentPlan());
    QCOMPARE(m.strategy, Strategy::MultiPoint);
    const double normalInterval = std::sqrt(2 * 0.5 / (4.0 / 36000));
    const double rangeInterval = std::sqrt(2 * 0.5 / (1.0 / 36000));
    QVERIFY(relativelyClose(*multi.nextCheckpointIn(World::FailureClass::Normal, 0), normalInterval, 1e-14));
    QVERIFY(relativelyClose(*multi.nextCheckpointIn(World::FailureClass::Range, 10), rangeInterval - 10, 1e-14));
    QVERIFY(relativelyClose(*multi.nextCheckpointIn(0), normalInterval, 1e-14));

    // No failures possible: never a checkpoint.
    CheckpointPlanner calm({1, 2, 3, 20}, 3600);
    QVERIFY(calm.setFailurePrior({0, 0, 0}, 3600));
    QVERIFY(std::isinf(*calm.nextCheckpointIn(1e6)));
}

QTEST_GUILESS_MAIN(TestCheckpointPlanner)
#include "tst_checkpointplanner.moc"
