// Test fixture: a FaultTolerance on every rank of a CommWorld, with the
// signals a test checks recorded, ready (protection in force) before use.
#pragma once

#include "commworld.h"
#include "patience.h"

#include <mmpi/ft/faulttolerance.h>

#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <memory>
#include <vector>

namespace mmpi::test {

struct Protected
{
    std::unique_ptr<FaultTolerance> ft;
    std::unique_ptr<QSignalSpy> reconfigured;
    std::unique_ptr<QSignalSpy> aborted;
};

// A FaultTolerance on every rank with `policy` for NodeTerm, all ready;
// empty if they did not get ready within `patienceMs`.
inline std::vector<Protected> protectAll(const CommWorld &w, Policy policy, int patienceMs = Patience)
{
    std::vector<Protected> all;
    for (int r = 0; r < w.size(); ++r) {
        Protected p;
        p.ft = std::make_unique<FaultTolerance>(w.world(r));
        p.ft->setPolicy(World::FailureClass::NodeTerm, policy);
        p.reconfigured = std::make_unique<QSignalSpy>(p.ft.get(), &FaultTolerance::worldReconfigured);
        p.aborted = std::make_unique<QSignalSpy>(p.ft.get(), &FaultTolerance::aborted);
        // Collective: every rank starts it before any waits (one thread here).
        (void)p.ft->protect(w[r]);
        all.push_back(std::move(p));
    }
    const bool ready = QTest::qWaitFor([&] {
        return std::all_of(all.begin(), all.end(), [](const Protected &p) { return !p.ft->communicator().isNull(); });
    }, patienceMs);
    return ready ? std::move(all) : std::vector<Protected>{};
}

// Runs an allreduce of (rank + 1) on every communicator at once and returns
// each result (-1 for an error or no answer within `patienceMs`).
inline QList<qint64> sumOfRanks(const QList<Communicator> &comms, int patienceMs = Patience)
{
    std::vector<Operation<qint64>> ops;
    for (const Communicator &c : comms)
        ops.push_back(c.allreduce(qint64(c.rank() + 1), Op::Sum));
    (void)QTest::qWaitFor([&] {
        return std::all_of(ops.begin(), ops.end(), [](const auto &op) { return op.request().isFinished(); });
    }, patienceMs);
    QList<qint64> sums;
    for (const auto &op : ops) {
        const auto got = op.request().isFinished() ? op.wait() : Result<qint64>(Error{ErrorCode::Cancelled, {}});
        sums << (got ? *got : -1);
    }
    return sums;
}

} // namespace mmpi::test
