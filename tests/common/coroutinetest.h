// finish(task): how a test waits for a coroutine. Like QCoro::waitFor, it
// runs this thread's event loop until the task is done and returns its
// result; unlike it, a watchdog ends the test program with the waiting line
// when the task never finishes (a lost wake-up, a message that never comes),
// so a broken coroutine test fails at once, saying where, instead of hanging
// until CTest's timeout kills it without a word.
#pragma once

#include <QCoroTask>
#include <QTimer>

#include <chrono>
#include <source_location>

namespace mmpi::test {

// Far above any coroutine step of the suite on a loaded 2-core machine
// (the slowest, a REBUILD's recovery, takes seconds): only a hang reaches it.
constexpr std::chrono::milliseconds CoroutineWatchdog{60000};

template<typename T>
T finish(QCoro::Task<T> &task, std::chrono::milliseconds limit = CoroutineWatchdog,
         std::source_location where = std::source_location::current())
{
    QTimer watchdog;
    watchdog.setSingleShot(true);
    // The timer fires inside waitFor's event loop, on this thread.
    QObject::connect(&watchdog, &QTimer::timeout, [where, limit] {
        qFatal("%s:%u: the coroutine awaited here did not finish within %lld ms", where.file_name(),
               unsigned(where.line()), static_cast<long long>(limit.count()));
    });
    watchdog.start(limit);
    return QCoro::waitFor(task);
}

template<typename T>
T finish(QCoro::Task<T> &&task, std::chrono::milliseconds limit = CoroutineWatchdog,
         std::source_location where = std::source_location::current())
{
    return finish(task, limit, where);
}

} // namespace mmpi::test
