#include "children.h"

#include "switch.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace mmpi::linkemu {

namespace {

constexpr std::int64_t KillGraceNs = 3'000'000'000;

sigset_t handledSignals()
{
    sigset_t set;
    sigemptyset(&set);
    for (int signal : {SIGCHLD, SIGINT, SIGTERM, SIGHUP})
        sigaddset(&set, signal);
    return set;
}

std::vector<char *> pointers(std::vector<std::string> &strings)
{
    std::vector<char *> list;
    for (std::string &s : strings)
        list.push_back(s.data());
    list.push_back(nullptr);
    return list;
}

int exitStatus(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// After fork() in a process with a switch thread: only system calls.
[[noreturn]] void execChild(int netnsFd, char **argv, char **envp, const char *failure)
{
    if (netnsFd >= 0 && ::setns(netnsFd, CLONE_NEWNET) < 0)
        ::_exit(127);
    // An emulator killed outright cannot stop its command; the kernel does.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(argv[0], argv, envp);
    const char *why = std::strerror(errno);
    ::write(STDERR_FILENO, failure, std::strlen(failure));
    ::write(STDERR_FILENO, why, std::strlen(why));
    ::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
}

} // namespace

void Children::blockSignals()
{
    const sigset_t set = handledSignals();
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
}

std::string Children::start(const std::vector<std::string> &argv, const std::vector<std::string> &environment,
                            const std::string &netnsPath)
{
    // Everything the child needs is made before fork(): the switch thread
    // may hold the allocator's lock at that moment.
    std::vector<std::string> args = argv;
    std::vector<std::string> env = environment;
    for (char **e = environ; *e; ++e) {
        const std::string_view entry(*e);
        const auto name = entry.substr(0, entry.find('=') + 1);
        if (std::none_of(environment.begin(), environment.end(), [&](const std::string &v) { return v.starts_with(name); }))
            env.emplace_back(entry);
    }
    std::vector<char *> argp = pointers(args);
    std::vector<char *> envp = pointers(env);
    const std::string failure = "mmpi-linkemu: cannot run '" + argv[0] + "': ";
    int netnsFd = -1;
    if (!netnsPath.empty() && (netnsFd = ::open(netnsPath.c_str(), O_RDONLY | O_CLOEXEC)) < 0)
        return "open " + netnsPath + ": " + std::strerror(errno);
    const pid_t pid = ::fork();
    if (pid == 0)
        execChild(netnsFd, argp.data(), envp.data(), failure.c_str());
    if (netnsFd >= 0)
        ::close(netnsFd);
    if (pid < 0)
        return std::string("fork: ") + std::strerror(errno);
    m_children.push_back({pid});
    return {};
}

void Children::reap()
{
    for (Child &child : m_children) {
        int status = 0;
        if (child.status < 0 && ::waitpid(child.pid, &status, WNOHANG) == child.pid)
            child.status = exitStatus(status);
    }
}

void Children::stopAll(int signal)
{
    for (const Child &child : m_children) {
        if (child.status < 0)
            ::kill(child.pid, signal);
    }
}

bool Children::anyRunning() const
{
    return std::any_of(m_children.begin(), m_children.end(), [](const Child &c) { return c.status < 0; });
}

int Children::wait(double timeoutS)
{
    const sigset_t set = handledSignals();
    const std::int64_t start = monotonicNs();
    std::int64_t deadline = timeoutS > 0 ? start + std::int64_t(timeoutS * 1e9) : INT64_MAX;
    int stoppedWith = -1; // the status a signal or the timeout decided
    reap();
    while (anyRunning()) {
        const std::int64_t left = std::max<std::int64_t>(0, deadline - monotonicNs());
        const timespec timeout{left / 1000000000, left % 1000000000};
        const int signal = ::sigtimedwait(&set, nullptr, deadline == INT64_MAX ? nullptr : &timeout);
        reap();
        if (!anyRunning())
            break;
        const bool expired = signal < 0 && errno == EAGAIN;
        if (stoppedWith >= 0 && (expired || signal == SIGINT || signal == SIGTERM || signal == SIGHUP)) {
            stopAll(SIGKILL); // the grace is over, or asked twice
            deadline = INT64_MAX;
        } else if (expired || (signal > 0 && signal != SIGCHLD)) {
            stoppedWith = expired ? 124 : 128 + signal;
            std::fprintf(stderr, "mmpi-linkemu: %s; stopping the command\n",
                         expired ? "timeout" : (std::string("received SIG") + sigabbrev_np(signal)).c_str());
            stopAll(SIGTERM);
            deadline = monotonicNs() + KillGraceNs;
        }
    }
    if (stoppedWith >= 0)
        return stoppedWith;
    int worst = 0;
    for (const Child &child : m_children)
        worst = std::max(worst, child.status);
    return worst;
}

} // namespace mmpi::linkemu
