// The emulator's network namespaces: making them (a TUN device with an
// address in each) and removing them, whatever becomes of the emulator.
//
// Removal has one path, the guardian: a process forked before anything is
// made, which waits for the emulator to close a pipe (it ends, or it is
// killed, even with SIGKILL) and then kills what still runs in the
// namespaces and deletes them. It ignores the signals a terminal or a
// test sends to the emulator's whole process group.
#pragma once

#include "options.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace mmpi::linkemu {

// Runs `args` (args[0] found in PATH) and waits; its stdout in `out` if
// given. Returns an error message naming the command, or an empty string.
std::string runCommand(const std::vector<std::string> &args, std::string *out = nullptr);

class Guardian
{
public:
    // Forks the guardian for the namespaces `names` and the host's links
    // `hostLinks` (deleted after them); an error message, or empty.
    std::string start(const std::vector<std::string> &names, const std::vector<std::string> &hostLinks = {});
    // Closes the pipe and waits until the guardian has removed everything.
    void finish();

private:
    int m_pipe = -1;
    pid_t m_pid = -1;
};

// Kills what runs in each namespace of `names` that exists, and deletes it.
void removeNamespaces(const std::vector<std::string> &names);
// Deletes each of the host's links `names` that exists.
void removeHostLinks(const std::vector<std::string> &names);

// The control network: bridge `bridge` on the host with `hostAddress`/24,
// and in each namespace of `names` a veth `device` with addresses[i]/24
// whose host end hostEnds[i] is enslaved to the bridge. An error message,
// or empty.
std::string makeControlNetwork(const std::string &bridge, const std::vector<std::string> &hostEnds,
                               const std::string &hostAddress, const std::vector<std::string> &names,
                               const std::string &device, const std::vector<std::string> &addresses);

// Makes namespace `name` with TUN device `device` in it, up, with
// `address`/24 and `mtu`, and loopback up. Returns the device's descriptor
// (non-blocking, close-on-exec) or -1 with `error` set.
int makeNode(const std::string &name, const std::string &device, const std::string &address, int mtu,
             std::string *error);

// A tbf qdisc on `device` in namespace `name` at `rate` bytes/s, a bucket of
// one `mtu` frame and a queue of `limitBytes`: frames wait in the node's own
// kernel, so its sockets' unsent counts are what a radio's would be. An
// error message, or empty.
std::string shapeInKernel(const std::string &name, const std::string &device, double rate, int mtu,
                          std::size_t limitBytes);

// Why the emulator cannot run here (not root, no TUN, no `ip`), or empty.
std::string whyNotHere();

} // namespace mmpi::linkemu
