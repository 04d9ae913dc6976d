#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

namespace mmpi::linkemu {

namespace {

constexpr int MaxNodes = 64;

// A number in [low, high], all of `text`; nullopt otherwise.
std::optional<double> number(const std::string &text, double low, double high)
{
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < low
        || value > high)
        return std::nullopt;
    return value;
}

// "90000", "90k", "5M": bytes per second, k and M decimal as on a radio's label.
std::optional<double> rate(std::string text)
{
    double scale = 1;
    if (!text.empty() && (text.back() == 'k' || text.back() == 'M')) {
        scale = text.back() == 'k' ? 1e3 : 1e6;
        text.pop_back();
    }
    const auto value = number(text, 1, 1e10 / scale);
    if (!value)
        return std::nullopt;
    return *value * scale;
}

std::optional<std::uint32_t> subnet(const std::string &text)
{
    std::uint32_t address = 0;
    std::size_t at = 0;
    for (int part = 0; part < 3; ++part) {
        const std::size_t dot = text.find('.', at);
        const std::string piece = text.substr(at, part < 2 ? dot - at : std::string::npos);
        const auto octet = number(piece, 0, 255);
        if ((part < 2 && dot == std::string::npos) || !octet || piece.find('.') != std::string::npos
            || double(int(*octet)) != *octet)
            return std::nullopt;
        address = address << 8 | std::uint32_t(*octet);
        at = dot + 1;
    }
    return address << 8;
}

using Setter = std::function<std::string(Options &, const std::string &)>;

std::string bad(const std::string &option, const std::string &value, const std::string &what)
{
    return option + ": '" + value + "' is not " + what;
}

const std::map<std::string, Setter> &setters()
{
    static const std::map<std::string, Setter> table = {
        {"--nodes", [](Options &o, const std::string &v) {
             const auto n = number(v, 1, MaxNodes);
             if (!n || double(int(*n)) != *n)
                 return bad("--nodes", v, "a whole number from 1 to " + std::to_string(MaxNodes));
             o.nodes = int(*n);
             return std::string();
         }},
        {"--profile", [](Options &o, const std::string &v) {
             const auto profile = findProfile(v);
             if (!profile)
                 return "--profile: unknown profile '" + v + "' (known: " + profileNames() + ")";
             o.link = *profile;
             return std::string();
         }},
        {"--latency", [](Options &o, const std::string &v) {
             const auto ms = number(v, 0, 60000);
             if (!ms)
                 return bad("--latency", v, "milliseconds from 0 to 60000");
             o.link.latencyMs = *ms;
             return std::string();
         }},
        {"--rate", [](Options &o, const std::string &v) {
             const auto r = rate(v);
             if (!r)
                 return bad("--rate", v, "bytes per second (e.g. 90000, 90k, 5M)");
             o.link.rateBytesPerSecond = *r;
             return std::string();
         }},
        {"--jitter", [](Options &o, const std::string &v) {
             const auto ms = number(v, 0, 60000);
             if (!ms)
                 return bad("--jitter", v, "milliseconds from 0 to 60000");
             o.link.jitterMs = *ms;
             return std::string();
         }},
        {"--loss", [](Options &o, const std::string &v) {
             const auto p = number(v, 0, 0.5);
             if (!p)
                 return bad("--loss", v, "a probability from 0 to 0.5");
             o.link.loss = *p;
             return std::string();
         }},
        {"--seed", [](Options &o, const std::string &v) {
             const auto s = number(v, 0, 9007199254740992.0);
             if (!s || double(std::uint64_t(*s)) != *s)
                 return bad("--seed", v, "a whole number");
             o.seed = std::uint64_t(*s);
             return std::string();
         }},
        {"--queue-ms", [](Options &o, const std::string &v) {
             const auto ms = number(v, 1, 60000);
             if (!ms)
                 return bad("--queue-ms", v, "milliseconds from 1 to 60000");
             o.queueMs = *ms;
             return std::string();
         }},
        {"--mtu", [](Options &o, const std::string &v) {
             const auto m = number(v, 576, 9000);
             if (!m || double(int(*m)) != *m)
                 return bad("--mtu", v, "a whole number of bytes from 576 to 9000");
             o.mtu = int(*m);
             return std::string();
         }},
        {"--subnet", [](Options &o, const std::string &v) {
             const auto s = subnet(v);
             if (!s)
                 return bad("--subnet", v, "the first three numbers of an IPv4 /24, e.g. 10.77.0");
             o.subnet = *s;
             return std::string();
         }},
        {"--timeout", [](Options &o, const std::string &v) {
             const auto s = number(v, 0.001, 86400);
             if (!s)
                 return bad("--timeout", v, "seconds from 0.001 to 86400");
             o.timeoutS = *s;
             return std::string();
         }},
    };
    return table;
}

const std::map<std::string, bool Options::*> &flags()
{
    static const std::map<std::string, bool Options::*> table = {
        {"--each", &Options::each}, {"--stats", &Options::stats}};
    return table;
}

} // namespace

std::size_t Options::queueBytes() const
{
    // At least a few full frames, so a slow profile still carries bursts.
    return std::max<std::size_t>(std::size_t(link.rateBytesPerSecond * queueMs / 1000.0), std::size_t(mtu) * 4);
}

std::string Options::address(int node) const
{
    const std::uint32_t a = subnet + std::uint32_t(node) + 1;
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." + std::to_string((a >> 8) & 0xff)
        + "." + std::to_string(a & 0xff);
}

ParsedOptions parseOptions(const std::vector<std::string> &args)
{
    ParsedOptions parsed;
    parsed.options.link = *findProfile("bluetooth");
    parsed.options.subnet = 10u << 24 | 77u << 16;
    // Overrides apply after the profile, wherever they stand on the line.
    std::vector<std::pair<std::string, std::string>> overrides;
    std::size_t i = 0;
    for (; i < args.size() && args[i] != "--"; ++i) {
        const std::string &arg = args[i];
        if (arg == "-h" || arg == "--help") {
            parsed.help = true;
            return parsed;
        }
        if (arg == "--no-realtime" || arg == "--no-kernel-shaping") {
            (arg == "--no-realtime" ? parsed.options.realtime : parsed.options.kernelShaping) = false;
        } else if (const auto flag = flags().find(arg); flag != flags().end()) {
            parsed.options.*(flag->second) = true;
        } else if (const std::size_t eq = arg.find('='); eq != std::string::npos && setters().count(arg.substr(0, eq))) {
            overrides.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
        } else if (setters().count(arg)) {
            if (i + 1 >= args.size() || args[i + 1] == "--") {
                parsed.error = arg + " needs a value";
                return parsed;
            }
            overrides.emplace_back(arg, args[++i]);
        } else {
            parsed.error = "unknown option '" + arg + "'";
            return parsed;
        }
    }
    std::stable_partition(overrides.begin(), overrides.end(), [](const auto &o) { return o.first == "--profile"; });
    for (const auto &[option, value] : overrides) {
        if (std::string error = setters().at(option)(parsed.options, value); !error.empty()) {
            parsed.error = error;
            return parsed;
        }
    }
    if (i + 1 >= args.size()) {
        parsed.error = "no command: give one after '--'";
        return parsed;
    }
    parsed.options.command.assign(args.begin() + std::ptrdiff_t(i) + 1, args.end());
    return parsed;
}

std::string usage()
{
    return "usage: mmpi-linkemu [--nodes N] [--profile " + profileNames()
        + "]\n"
          "                    [--latency MS] [--rate BYTES_PER_S] [--jitter MS] [--loss P] [--seed N]\n"
          "                    [--queue-ms MS] [--mtu BYTES] [--subnet A.B.C] [--timeout S]\n"
          "                    [--each] [--stats] [--no-realtime] [--no-kernel-shaping] -- COMMAND [ARG...]\n"
          "\n"
          "Makes N network namespaces joined by emulated radios (one per node: its sends share\n"
          "it), runs COMMAND on the host with MMPI_LINKEMU_NS_<i> and MMPI_LINKEMU_ADDR_<i> set,\n"
          "or with --each once inside every namespace ({node} and {addr} in its arguments\n"
          "replaced), and removes the namespaces when it ends. Needs root and /dev/net/tun.\n"
          "Defaults: --nodes 2 --profile bluetooth --queue-ms 1000 --mtu 1500 --subnet 10.77.0 --seed 1.\n"
          "Exit status: COMMAND's (the largest of them with --each; 128+S for signal S),\n"
          "2 usage error, 77 cannot run here (not root, no TUN), 124 --timeout, 1 set-up failed.\n"
          "docs/guide/linkemu.md\n";
}

} // namespace mmpi::linkemu
