// Children: the command the emulator runs, once on the host or once in each
// namespace, and the wait for it. The emulator's termination signals
// (SIGINT, SIGTERM, SIGHUP) and --timeout stop the commands: SIGTERM, and
// SIGKILL to those still running 3 s later.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace mmpi::linkemu {

class Children
{
public:
    // The signals wait() handles; the caller blocks them in every thread
    // before it starts any (children get an empty mask).
    static void blockSignals();

    // Starts `argv` with `environment` (NAME=VALUE, added to this process's),
    // in the network namespace at `netnsPath` unless it is empty. An error
    // message, or empty.
    std::string start(const std::vector<std::string> &argv, const std::vector<std::string> &environment,
                      const std::string &netnsPath);

    // Waits until every child has ended; their exit status (the largest,
    // 128+S for a signal S), or 128+S if signal S stopped them, or 124 at
    // the timeout (0: none).
    int wait(double timeoutS);

    // Sends `signal` to every child still running.
    void stopAll(int signal);

private:
    void reap();
    bool anyRunning() const;

    struct Child
    {
        pid_t pid;
        int status = -1; // -1: running
    };
    std::vector<Child> m_children;
};

} // namespace mmpi::linkemu
