#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
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

std::string bad(const std::string &option, const std::string &value, const std::string &what)
{
    return option + ": '" + value + "' is not " + what;
}

// An option with a number: its bounds, whether it must be whole, what to call
// it in an error, and where it goes.
struct NumberOption
{
    double low, high;
    bool whole;
    const char *what;
    void (*set)(Options &, double);
};

const std::map<std::string, NumberOption> &numberOptions()
{
    static const std::map<std::string, NumberOption> table = {
        {"--nodes", {1, MaxNodes, true, "a whole number from 1 to 64", [](Options &o, double v) { o.nodes = int(v); }}},
        {"--latency", {0, 60000, false, "milliseconds from 0 to 60000",
                       [](Options &o, double v) { o.link.latencyMs = v; }}},
        {"--jitter", {0, 60000, false, "milliseconds from 0 to 60000", [](Options &o, double v) { o.link.jitterMs = v; }}},
        {"--loss", {0, 0.5, false, "a probability from 0 to 0.5", [](Options &o, double v) { o.link.loss = v; }}},
        {"--seed", {0, 9007199254740992.0, true, "a whole number", [](Options &o, double v) { o.seed = std::uint64_t(v); }}},
        {"--queue-ms", {1, 60000, false, "milliseconds from 1 to 60000", [](Options &o, double v) { o.queueMs = v; }}},
        {"--mtu", {576, 9000, true, "a whole number of bytes from 576 to 9000", [](Options &o, double v) { o.mtu = int(v); }}},
        {"--timeout", {0.001, 86400, false, "seconds from 0.001 to 86400", [](Options &o, double v) { o.timeoutS = v; }}},
    };
    return table;
}

bool takesValue(const std::string &option)
{
    return option == "--profile" || option == "--rate" || option == "--subnet" || option == "--control"
        || numberOptions().count(option);
}

// Sets `option` (one that takesValue()) from `value`; a usage error, or empty.
std::string setOption(Options &o, const std::string &option, const std::string &value)
{
    if (option == "--profile") {
        const auto profile = findProfile(value);
        if (!profile)
            return "--profile: unknown profile '" + value + "' (known: " + profileNames() + ")";
        o.link = *profile;
    } else if (option == "--rate") {
        const auto r = rate(value);
        if (!r)
            return bad(option, value, "bytes per second (e.g. 90000, 90k, 5M)");
        o.link.rateBytesPerSecond = *r;
    } else if (option == "--subnet") {
        const auto net = subnet(value);
        if (!net)
            return bad(option, value, "the first three numbers of an IPv4 /24, e.g. 10.77.0");
        o.subnet = *net;
    } else if (option == "--control") {
        const auto net = subnet(value);
        if (!net)
            return bad(option, value, "the first three numbers of an IPv4 /24, e.g. 10.78.0");
        o.controlSubnet = *net;
    } else {
        const NumberOption &spec = numberOptions().at(option);
        const auto n = number(value, spec.low, spec.high);
        if (!n || (spec.whole && std::floor(*n) != *n))
            return bad(option, value, spec.what);
        spec.set(o, *n);
    }
    return {};
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

namespace {

std::string dotted(std::uint32_t a)
{
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." + std::to_string((a >> 8) & 0xff)
        + "." + std::to_string(a & 0xff);
}

} // namespace

std::string Options::address(int node) const
{
    return dotted(subnet + std::uint32_t(node) + 1);
}

std::string Options::controlAddress(int node) const
{
    return dotted(controlSubnet + (node < 0 ? 254u : std::uint32_t(node) + 1));
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
        } else if (const std::size_t eq = arg.find('='); eq != std::string::npos && takesValue(arg.substr(0, eq))) {
            overrides.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
        } else if (takesValue(arg)) {
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
        if (std::string error = setOption(parsed.options, option, value); !error.empty()) {
            parsed.error = error;
            return parsed;
        }
    }
    if (parsed.options.controlSubnet && parsed.options.controlSubnet == parsed.options.subnet) {
        parsed.error = "--control needs a /24 of its own, not the radios' (--subnet)";
        return parsed;
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
          "                    [--queue-ms MS] [--mtu BYTES] [--subnet A.B.C] [--control A.B.C] [--timeout S]\n"
          "                    [--each] [--stats] [--no-realtime] [--no-kernel-shaping] -- COMMAND [ARG...]\n"
          "\n"
          "Makes N network namespaces joined by emulated radios (one per node: its sends share\n"
          "it), runs COMMAND on the host with MMPI_LINKEMU_NS_<i> and MMPI_LINKEMU_ADDR_<i> set,\n"
          "or with --each once inside every namespace ({node} and {addr} in its arguments\n"
          "replaced), and removes the namespaces when it ends. Needs root and /dev/net/tun.\n"
          "--control adds a network nothing shapes: ctl0 at A.B.C.<i+1> in each namespace, a\n"
          "bridge at A.B.C.254 on the host (MMPI_LINKEMU_CONTROL), for a launcher's own traffic.\n"
          "Defaults: --nodes 2 --profile bluetooth --queue-ms 1000 --mtu 1500 --subnet 10.77.0 --seed 1.\n"
          "Exit status: COMMAND's (the largest of them with --each; 128+S for signal S),\n"
          "2 usage error, 77 cannot run here (not root, no TUN), 124 --timeout, 1 set-up failed.\n"
          "docs/guide/linkemu.md\n";
}

} // namespace mmpi::linkemu
