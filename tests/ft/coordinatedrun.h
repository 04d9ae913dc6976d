// What the coordinated-checkpoint tests share: a collective call started on
// every rank of an in-process world at once, since each rank's call waits
// for the others'.
#pragma once

#include "commworld.h"
#include "coroutinetest.h"

#include <mmpi/ft/coordinatedcheckpoint.h>

#include <QCoroTask>

#include <vector>

namespace mmpi::test {

// Runs `run` for every rank at once and waits for all outcomes.
template<typename F>
std::vector<CoordinatedCheckpoint::Outcome> together(const CommWorld &w, F run)
{
    std::vector<QCoro::Task<CoordinatedCheckpoint::Outcome>> tasks;
    for (int r = 0; r < w.size(); ++r)
        tasks.push_back(run(r));
    std::vector<CoordinatedCheckpoint::Outcome> outcomes;
    for (auto &task : tasks)
        outcomes.push_back(mmpi::test::finish(task));
    return outcomes;
}

} // namespace mmpi::test
