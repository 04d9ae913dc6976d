// mmpi-linkemu: N network namespaces joined by emulated radios, for running
// the real tcp transport over links that behave like Bluetooth or Wi-Fi
// (docs/guide/linkemu.md).
#include "children.h"
#include "namespaces.h"
#include "options.h"
#include "switch.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace mmpi::linkemu;

namespace {

// Same device name in every namespace: a program inside needs no index.
const std::string Device = "radio0";
const std::string ControlDevice = "ctl0";

// The host's bridge of the control network ("b"; its veths end in "v<i>"):
// 3 + 7 digits of a pid + 3 fits IFNAMSIZ.
std::string controlBridge()
{
    return "mec" + std::to_string(::getpid()) + "b";
}

std::string controlVeth(int node)
{
    const std::string bridge = controlBridge();
    return bridge.substr(0, bridge.size() - 1) + "v" + std::to_string(node);
}

// The veths first: a namespace's deletion takes its end of a pair with it
// only once the kernel has let the namespace go, later.
std::vector<std::string> hostLinks(const Options &options)
{
    std::vector<std::string> links;
    for (int node = 0; options.controlSubnet && node < options.nodes; ++node)
        links.push_back(controlVeth(node));
    if (options.controlSubnet)
        links.push_back(controlBridge());
    return links;
}

std::string namespaceName(int node)
{
    return "mmpi-emu-" + std::to_string(::getpid()) + "-" + std::to_string(node);
}

std::vector<std::string> namespaceNames(const Options &options)
{
    std::vector<std::string> names;
    for (int node = 0; node < options.nodes; ++node)
        names.push_back(namespaceName(node));
    return names;
}

// "10.77.0": node i is at <this>.<i+1>, as mmpirun --rank-address '<this>.{rank+1}' says.
std::string subnetText(const Options &options)
{
    const std::string first = options.address(0);
    return first.substr(0, first.rfind('.'));
}

// 30, 2.5: as a person writes it.
std::string decimal(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// What the command learns of the emulated network.
std::vector<std::string> environmentFor(const Options &options)
{
    std::vector<std::string> env = {
        "MMPI_LINKEMU_NODES=" + std::to_string(options.nodes),
        "MMPI_LINKEMU_PREFIX=mmpi-emu-" + std::to_string(::getpid()) + "-",
        "MMPI_LINKEMU_DEVICE=" + Device,
        "MMPI_LINKEMU_SUBNET=" + subnetText(options),
        "MMPI_LINKEMU_PROFILE=" + options.link.name,
        "MMPI_LINKEMU_LATENCY_MS=" + decimal(options.link.latencyMs),
        "MMPI_LINKEMU_RATE=" + std::to_string(std::int64_t(options.link.rateBytesPerSecond)),
        "MMPI_LINKEMU_MTU=" + std::to_string(options.mtu),
    };
    for (int node = 0; node < options.nodes; ++node) {
        env.push_back("MMPI_LINKEMU_NS_" + std::to_string(node) + "=" + namespaceName(node));
        env.push_back("MMPI_LINKEMU_ADDR_" + std::to_string(node) + "=" + options.address(node));
    }
    if (options.controlSubnet) {
        const std::string host = options.controlAddress(-1);
        env.push_back("MMPI_LINKEMU_CONTROL=" + controlBridge());
        env.push_back("MMPI_LINKEMU_CONTROL_DEVICE=" + ControlDevice);
        env.push_back("MMPI_LINKEMU_CONTROL_SUBNET=" + host.substr(0, host.rfind('.')));
    }
    return env;
}

std::string replaced(std::string text, const std::string &from, const std::string &to)
{
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

std::string startCommands(const Options &options, Children &children, bool shaped)
{
    std::vector<std::string> env = environmentFor(options);
    env.push_back(std::string("MMPI_LINKEMU_SHAPING=") + (shaped ? "kernel" : "switch"));
    if (!options.each)
        return children.start(options.command, env, {});
    for (int node = 0; node < options.nodes; ++node) {
        std::vector<std::string> argv;
        for (const std::string &arg : options.command)
            argv.push_back(replaced(replaced(arg, "{node}", std::to_string(node)), "{addr}", options.address(node)));
        std::vector<std::string> own = env;
        own.push_back("MMPI_LINKEMU_NODE=" + std::to_string(node));
        own.push_back("MMPI_LINKEMU_ADDR=" + options.address(node));
        if (std::string error = children.start(argv, own, "/run/netns/" + namespaceName(node)); !error.empty())
            return error;
    }
    return {};
}

// The switch's timing is the emulation: on a busy machine a normal thread
// waits for a CPU, and every frame with it.
void becomeRealtime(bool wanted)
{
    if (!wanted)
        return;
    sched_param param{};
    param.sched_priority = sched_get_priority_min(SCHED_FIFO) + 9;
    if (const int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); error != 0)
        std::fprintf(stderr, "mmpi-linkemu: warning: the switch runs without SCHED_FIFO (%s); "
                             "on a loaded machine frames may leave late\n", std::strerror(error));
}

void printStats(const Options &options, const Switch &net, std::int64_t startNs)
{
    for (int node = 0; node < options.nodes; ++node) {
        const RadioStats &s = net.radio(node).stats();
        std::fprintf(stderr,
                     "mmpi-linkemu: node %d (%s): %llu frames, %llu bytes sent; dropped %llu (queue full), "
                     "%llu lost; at most %zu bytes queued\n",
                     node, options.address(node).c_str(), (unsigned long long)s.frames, (unsigned long long)s.bytes,
                     (unsigned long long)s.droppedQueueFull, (unsigned long long)s.lost, s.mostQueued);
    }
    std::fprintf(stderr, "mmpi-linkemu: %llu packets delivered, %llu unroutable, %llu not written\n",
                 (unsigned long long)net.stats().delivered, (unsigned long long)net.stats().unroutable,
                 (unsigned long long)net.stats().writeErrors);
    // The emulator's own cost (its commands not included): the switch's, nearly all.
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::fprintf(stderr, "mmpi-linkemu: CPU %.2f s user, %.2f s system in %.2f s\n",
                 double(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6,
                 double(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6, double(monotonicNs() - startNs) / 1e9);
}

RadioConfig radioConfig(const Options &options)
{
    return {options.link.latencyMs, options.link.rateBytesPerSecond, options.link.jitterMs, options.link.loss,
            options.queueBytes(), options.seed};
}

// Without the qdisc the switch still holds every frame to the rate; only
// the nodes' kernels see their frames as sent the moment they are queued.
bool shapeNodes(const Options &options)
{
    for (int node = 0; node < options.nodes; ++node) {
        const std::string error = shapeInKernel(namespaceName(node), Device, options.link.rateBytesPerSecond,
                                                options.mtu, options.queueBytes());
        if (!error.empty()) {
            std::fprintf(stderr, "mmpi-linkemu: warning: no kernel shaping (%s); the switch alone keeps the rate, "
                                 "and sockets count queued frames as sent\n", error.c_str());
            return false;
        }
    }
    return true;
}

std::vector<int> makeNodes(const Options &options, std::string *error)
{
    std::vector<int> fds;
    for (int node = 0; node < options.nodes; ++node) {
        const int fd = makeNode(namespaceName(node), Device, options.address(node), options.mtu, error);
        if (fd < 0)
            break;
        fds.push_back(fd);
    }
    if (int(fds.size()) == options.nodes && options.controlSubnet) {
        std::vector<std::string> addresses;
        for (int node = 0; node < options.nodes; ++node)
            addresses.push_back(options.controlAddress(node));
        std::vector<std::string> hostEnds;
        for (int node = 0; node < options.nodes; ++node)
            hostEnds.push_back(controlVeth(node));
        *error = makeControlNetwork(controlBridge(), hostEnds, options.controlAddress(-1), namespaceNames(options),
                                    ControlDevice, addresses);
        if (!error->empty()) {
            for (int fd : fds)
                ::close(fd);
            fds.clear();
        }
    }
    return fds;
}

// Namespaces made, switch running: the command's run.
int emulate(const Options &options, const std::vector<int> &fds, bool shaped)
{
    const std::int64_t startNs = monotonicNs();
    Switch net(fds, options.subnet, radioConfig(options));
    const int stop = ::eventfd(0, EFD_CLOEXEC);
    if (stop < 0) {
        std::fprintf(stderr, "mmpi-linkemu: eventfd: %s\n", std::strerror(errno));
        return 1;
    }
    std::thread switcher([&] {
        becomeRealtime(options.realtime);
        if (const std::string error = net.run(stop); !error.empty()) {
            std::fprintf(stderr, "mmpi-linkemu: the switch stopped: %s\n", error.c_str());
            ::kill(::getpid(), SIGTERM); // the command would go on without a network: stop it
        }
    });
    Children children;
    const std::string error = startCommands(options, children, shaped);
    if (!error.empty()) {
        std::fprintf(stderr, "mmpi-linkemu: %s\n", error.c_str());
        children.stopAll(SIGTERM); // the nodes started already cannot do without the others
    }
    int status = children.wait(options.timeoutS);
    if (!error.empty())
        status = 127;
    const std::uint64_t one = 1;
    ::write(stop, &one, sizeof one);
    switcher.join();
    ::close(stop);
    if (options.stats)
        printStats(options, net, startNs);
    return status;
}

} // namespace

int main(int argc, char **argv)
{
    const ParsedOptions parsed = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
    if (parsed.help) {
        std::fputs(usage().c_str(), stdout);
        return 0;
    }
    if (!parsed.error.empty()) {
        std::fprintf(stderr, "mmpi-linkemu: %s\n(mmpi-linkemu --help for the options)\n", parsed.error.c_str());
        return 2;
    }
    if (const std::string why = whyNotHere(); !why.empty()) {
        std::fprintf(stderr, "mmpi-linkemu: skipped: %s\n", why.c_str());
        return 77;
    }
    const Options &options = parsed.options;
    Children::blockSignals(); // before any thread or child exists
    Guardian guardian;
    if (const std::string error = guardian.start(namespaceNames(options), hostLinks(options)); !error.empty()) {
        std::fprintf(stderr, "mmpi-linkemu: cannot start the clean-up guardian: %s\n", error.c_str());
        return 1;
    }
    std::string error;
    const std::vector<int> fds = makeNodes(options, &error);
    int status = 1;
    if (int(fds.size()) == options.nodes) {
        const bool shaped = options.kernelShaping && shapeNodes(options);
        status = emulate(options, fds, shaped);
    } else {
        std::fprintf(stderr, "mmpi-linkemu: cannot make the namespaces: %s\n", error.c_str());
    }
    for (int fd : fds)
        ::close(fd);
    guardian.finish();
    return status;
}
