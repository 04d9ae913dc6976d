// ParkSweeper: gives parked link readers (LinkReader::park) back to their
// links' threads once their claimers have stayed away too long. One thread
// per process sweeps them all, so that parking costs a claimer no system
// call: a timer per reader, re-armed as it was parked, cost one each time.
#pragma once

#include <QList>

#include <condition_variable>
#include <memory>
#include <mutex>

namespace mmpi::detail {

class StreamReader;

class ParkSweeper
{
public:
    // A reader whose claimer may not come back gets back to its link's
    // thread between this long and twice this long after it was parked.
    // The sweeper wakes once a period while readers are parked, in every
    // process: with 8 ranks on 2 CPUs, 1 ms (8000 wake-ups a second, each
    // taking a CPU from a rank) made 8-rank collectives 10-25 % slower.
    static constexpr qint64 ParkNanoseconds = 5'000'000;

    // The process's sweeper; its thread starts with the first park.
    static ParkSweeper &instance();

    // Any thread: `reader` has been parked and is not yet being watched
    // (StreamReader::park calls this once per stretch of parks).
    void watch(std::weak_ptr<StreamReader> reader);

private:
    ParkSweeper() = default;
    void run();

    std::mutex m_mutex;
    std::condition_variable m_parked;
    QList<std::weak_ptr<StreamReader>> m_watched;
    bool m_running = false;
};

} // namespace mmpi::detail
