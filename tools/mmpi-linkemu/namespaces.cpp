#include "namespaces.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace mmpi::linkemu {

namespace {

std::string joined(const std::vector<std::string> &args)
{
    std::string text;
    for (const std::string &arg : args)
        text += (text.empty() ? "" : " ") + arg;
    return text;
}

bool inPath(const std::string &program)
{
    const char *path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0)
            return true;
    }
    return false;
}

std::string readAll(int fd)
{
    std::string text;
    char buffer[4096];
    for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) != 0;) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        text.append(buffer, std::size_t(got));
    }
    return text;
}

std::string netnsPath(const std::string &name)
{
    return "/run/netns/" + name;
}

// The guardian's whole life: wait for the emulator to go, then clean up.
[[noreturn]] void guard(int pipeFd, const std::vector<std::string> &names, const std::vector<std::string> &hostLinks)
{
    ::setsid(); // out of the emulator's process group: a kill of the group spares it
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
        std::signal(signal, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const int devNull = ::open("/dev/null", O_RDWR);
    if (devNull >= 0) {
        ::dup2(devNull, STDIN_FILENO);
        ::dup2(devNull, STDOUT_FILENO);
    }
    char byte;
    for (;;) {
        const ssize_t got = ::read(pipeFd, &byte, 1); // nobody writes: it returns at EOF
        if (got == 0 || (got < 0 && errno != EINTR))
            break;
    }
    removeHostLinks(hostLinks);
    removeNamespaces(names);
    std::_Exit(0);
}

int openTun(const std::string &device, std::string *error)
{
    const int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *error = std::string("open /dev/net/tun: ") + std::strerror(errno);
        return -1;
    }
    ifreq request{};
    request.ifr_flags = IFF_TUN | IFF_NO_PI; // IP packets only: no ARP, no header of our own
    std::strncpy(request.ifr_name, device.c_str(), IFNAMSIZ - 1);
    if (::ioctl(fd, TUNSETIFF, &request) < 0) {
        *error = "TUNSETIFF " + device + ": " + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

// The TUN device is made inside the namespace (this thread enters it and
// comes back), so it never appears on the host.
int tunInNamespace(const std::string &name, const std::string &device, std::string *error)
{
    const int self = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    const int target = ::open(netnsPath(name).c_str(), O_RDONLY | O_CLOEXEC);
    int fd = -1;
    if (self < 0 || target < 0) {
        *error = "open " + netnsPath(name) + ": " + std::strerror(errno);
    } else if (::setns(target, CLONE_NEWNET) < 0) {
        *error = "setns " + name + ": " + std::strerror(errno);
    } else {
        fd = openTun(device, error);
        if (::setns(self, CLONE_NEWNET) < 0) {
            std::fprintf(stderr, "mmpi-linkemu: cannot return to the host's network namespace: %s\n",
                         std::strerror(errno));
            std::abort(); // the guardian still removes the namespaces
        }
    }
    if (self >= 0)
        ::close(self);
    if (target >= 0)
        ::close(target);
    return fd;
}

} // namespace

std::string runCommand(const std::vector<std::string> &args, std::string *out)
{
    std::vector<char *> argv;
    for (const std::string &arg : args)
        argv.push_back(const_cast<char *>(arg.c_str()));
    argv.push_back(nullptr);
    int pipeFds[2] = {-1, -1};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (out) {
        if (::pipe2(pipeFds, O_CLOEXEC) < 0)
            return joined(args) + ": pipe: " + std::strerror(errno);
        posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
    }
    pid_t pid = -1;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (out) {
        ::close(pipeFds[1]);
        if (spawned == 0)
            *out = readAll(pipeFds[0]);
        ::close(pipeFds[0]);
    }
    if (spawned != 0)
        return joined(args) + ": " + std::strerror(spawned);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return {};
    return "'" + joined(args) + "' failed (" + (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                                                     : "signal " + std::to_string(WTERMSIG(status)))
        + ")";
}

std::string Guardian::start(const std::vector<std::string> &names, const std::vector<std::string> &hostLinks)
{
    int fds[2];
    // Close-on-exec: no command the emulator runs may keep the guardian waiting.
    if (::pipe2(fds, O_CLOEXEC) < 0)
        return std::string("pipe: ") + std::strerror(errno);
    const pid_t pid = ::fork();
    if (pid < 0)
        return std::string("fork: ") + std::strerror(errno);
    if (pid == 0) {
        ::close(fds[1]);
        guard(fds[0], names, hostLinks);
    }
    ::close(fds[0]);
    m_pipe = fds[1];
    m_pid = pid;
    return {};
}

void Guardian::finish()
{
    if (m_pipe >= 0)
        ::close(m_pipe);
    m_pipe = -1;
    while (m_pid > 0 && ::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
}

void removeNamespaces(const std::vector<std::string> &names)
{
    for (const std::string &name : names) {
        if (::access(netnsPath(name).c_str(), F_OK) != 0)
            continue;
        // A process left inside (a rank whose launcher was killed) would
        // keep the namespace alive, unnamed, after its deletion.
        std::string pids;
        if (runCommand({"ip", "netns", "pids", name}, &pids).empty()) {
            std::istringstream list(pids);
            for (long pid; list >> pid;) {
                if (pid > 1)
                    ::kill(pid_t(pid), SIGKILL);
            }
        }
        if (const std::string error = runCommand({"ip", "netns", "del", name}); !error.empty())
            std::fprintf(stderr, "mmpi-linkemu: cannot remove namespace %s: %s\n", name.c_str(), error.c_str());
    }
}

void removeHostLinks(const std::vector<std::string> &names)
{
    for (const std::string &name : names) {
        if (::access(("/sys/class/net/" + name).c_str(), F_OK) != 0)
            continue;
        if (const std::string error = runCommand({"ip", "link", "del", name}); !error.empty())
            std::fprintf(stderr, "mmpi-linkemu: cannot remove link %s: %s\n", name.c_str(), error.c_str());
    }
}

std::string makeControlNetwork(const std::string &bridge, const std::vector<std::string> &hostEnds,
                               const std::string &hostAddress, const std::vector<std::string> &names,
                               const std::string &device, const std::vector<std::string> &addresses)
{
    std::vector<std::vector<std::string>> steps = {
        {"ip", "link", "add", bridge, "type", "bridge"},
        {"ip", "addr", "add", hostAddress + "/24", "dev", bridge},
        {"ip", "link", "set", bridge, "up"},
    };
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string &hostEnd = hostEnds[i];
        steps.push_back({"ip", "link", "add", hostEnd, "type", "veth", "peer", "name", device, "netns", names[i]});
        steps.push_back({"ip", "link", "set", hostEnd, "master", bridge, "up"});
        steps.push_back({"ip", "-n", names[i], "addr", "add", addresses[i] + "/24", "dev", device});
        steps.push_back({"ip", "-n", names[i], "link", "set", device, "up"});
    }
    for (const auto &step : steps) {
        if (std::string e = runCommand(step); !e.empty())
            return e;
    }
    return {};
}

int makeNode(const std::string &name, const std::string &device, const std::string &address, int mtu,
             std::string *error)
{
    if (std::string e = runCommand({"ip", "netns", "add", name}); !e.empty()) {
        *error = e;
        return -1;
    }
    const int fd = tunInNamespace(name, device, error);
    if (fd < 0)
        return -1;
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "-n", name, "link", "set", "lo", "up"},
        {"ip", "-n", name, "link", "set", device, "mtu", std::to_string(mtu), "up"},
        {"ip", "-n", name, "addr", "add", address + "/24", "brd", "+", "dev", device},
    };
    for (const auto &step : steps) {
        if (std::string e = runCommand(step); !e.empty()) {
            *error = e;
            ::close(fd);
            return -1;
        }
    }
    return fd;
}

std::string shapeInKernel(const std::string &name, const std::string &device, double rate, int mtu,
                          std::size_t limitBytes)
{
    // tc's "bps" is bytes per second.
    return runCommand({"tc", "-n", name, "qdisc", "replace", "dev", device, "root", "tbf", "rate",
                       std::to_string(std::llround(rate)) + "bps", "burst", std::to_string(mtu), "limit",
                       std::to_string(limitBytes)});
}

std::string whyNotHere()
{
    if (::geteuid() != 0)
        return "network namespaces and TUN devices need root (run mmpi-linkemu as root)";
    if (::access("/dev/net/tun", R_OK | W_OK) != 0)
        return std::string("/dev/net/tun is not usable (") + std::strerror(errno)
            + "): this kernel or container has no TUN devices";
    if (!inPath("ip"))
        return "the 'ip' command (iproute2) is not installed";
    return {};
}

} // namespace mmpi::linkemu
