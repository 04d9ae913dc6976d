#include "launchoptions.h"

#include "ranktemplate.h"

#include <mmpi/core/duration.h>
#include <mmpi/transport/transportregistry.h>

#include <QCommandLineParser>
#include <QFileInfo>
#include <QHostAddress>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

#include <climits>
#include <cmath>
#include <memory>

namespace mmpi::tools {

namespace {

using namespace Qt::StringLiterals;

const QStringList knownTransports = {u"local"_s, u"tcp"_s, u"sim"_s};

Error usageError(const QString &message)
{
    return {ErrorCode::BadConfiguration, message};
}

// The parser and its options, built the same way for parsing and for --help.
struct CommandLine
{
    QCommandLineParser parser;
    QCommandLineOption nodes{{u"n"_s, u"nodes"_s},
        u"Number of nodes (ranks) to start, 1 to %1. Required."_s.arg(LaunchOptions::MaxNodes), u"N"_s};
    QCommandLineOption transport{u"transport"_s,
        u"Transport the nodes form their world over: local, tcp or sim (default: local)."_s, u"name"_s,
        u"local"_s};
    QCommandLineOption link{u"link"_s,
        u"sim only: the radio the links behave like: bluetooth, bluetooth-edr, wifi or ideal "
        "(default: bluetooth)."_s, u"profile"_s};
    QCommandLineOption linkLatency{u"link-latency"_s,
        u"sim only: one-way latency in milliseconds, instead of the profile's."_s, u"MS"_s};
    QCommandLineOption linkBandwidth{u"link-bandwidth"_s,
        u"sim only: bytes per second each node's radio sends (frame headers included; "
        "0 is unlimited), instead of the profile's."_s, u"BYTES_PER_S"_s};
    QCommandLineOption fault{u"fault"_s,
        u"sim only, repeatable: a scripted fault, \"rank R io-error at T\", \"rank R out-of-range "
        "at T for D\" or \"rank R terminates at T\"; T and D like 3s, 1.5s or 250ms, counted from "
        "the start of the node's formation."_s, u"event"_s};
    QCommandLineOption kill{u"kill"_s,
        u"Repeatable, any transport: \"rank R at T\", mmpirun sends SIGKILL to the process "
        "holding rank R at T (like 3s, 1.5s or 250ms) after it started the nodes; that node "
        "counts as crashed (--keep-going and --respawn apply), one not running at T is skipped."_s,
        u"event"_s};
    QCommandLineOption rankPrefix{u"rank-prefix"_s,
        u"Start each node as COMMAND followed by the program, with {rank} and {rank+N} in it "
        "replaced by the node's rank, e.g. 'ip netns exec ns{rank}' (words split at spaces; "
        "double quotes group them)."_s, u"COMMAND"_s};
    QCommandLineOption rankAddress{u"rank-address"_s,
        u"tcp only: the IP address each node listens on, with {rank} and {rank+N} replaced by "
        "its rank, e.g. '10.77.0.{rank+1}'; rank 0 gets a free port, the others any port."_s,
        u"ADDRESS"_s};
    QCommandLineOption timeout{u"timeout"_s,
        u"Stop every node and exit with status 124 if the job still runs after S seconds; "
        "0 means no limit (default: 0)."_s, u"S"_s, u"0"_s};
    QCommandLineOption formationTimeout{u"formation-timeout"_s,
        u"Deadline in seconds for forming the world, given to the nodes as "
        "MMPI_FORMATION_TIMEOUT_MS (default: 30)."_s, u"S"_s, u"30"_s};
    QCommandLineOption worldName{u"world-name"_s,
        u"Name of the world (default: mmpirun-<pid of mmpirun>)."_s, u"NAME"_s};
    QCommandLineOption keepGoing{u"keep-going"_s,
        u"When a node exits with a non-zero status or crashes, let the other nodes run "
        "to completion instead of stopping them (default: off)."_s};
    QCommandLineOption respawn{u"respawn"_s,
        u"When a node crashes or exits non-zero, start a replacement in its rank "
        "with MMPI_REJOIN=1 (it rejoins the formed world: REBUILD), at most N times in all; a "
        "replacement runs without --fault events (default: 0)."_s, u"N"_s, u"0"_s};
    QCommandLineOption bindTo{u"bind-to"_s,
        u"Which CPU each node runs on: core (rank r on the r-th CPU mmpirun may use, in turn), "
        "none (wherever the system puts it), or auto: core when there are 2 or more nodes and "
        "at least as many CPUs, or the nodes are a multiple of the CPUs (the same number on "
        "each), else none (default: auto)."_s, u"WHAT"_s, u"auto"_s};
    QCommandLineOption noPrefix{u"no-prefix"_s,
        u"Do not prefix each output line with \"[rank] \" (default: prefix on)."_s};
    QCommandLineOption help = parser.addHelpOption();
    QCommandLineOption version = parser.addVersionOption();

    CommandLine()
    {
        parser.setApplicationDescription(
            u"Starts N copies of a program on this machine as the ranks of one MMPI world."_s);
        // Everything after the program name belongs to the program, with or without "--".
        parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsPositionalArguments);
        parser.addOptions({nodes, transport, link, linkLatency, linkBandwidth, fault, kill, rankPrefix,
                           rankAddress, timeout, formationTimeout, worldName, keepGoing, respawn, bindTo, noPrefix});
        parser.addPositionalArgument(u"program"_s,
            u"The program every node runs: a path, a name on PATH, or a name next to mmpirun."_s,
            u"[--] program"_s);
        parser.addPositionalArgument(u"args"_s, u"Arguments given to every node."_s, u"[args...]"_s);
    }
};

const char *const epilogue = R"(
Environment of every node (the rest is inherited from mmpirun):
  MMPI_RANK                  rank of this node, 0..N-1
  MMPI_SIZE                  number of nodes, N
  MMPI_TRANSPORT             local, tcp or sim
  MMPI_ROOT_ADDRESS          where rank 0 listens: local://mmpi-<pid>-<8 hex digits>,
                             tcp://127.0.0.1:<free port> or sim://mmpi-<pid>-<8 hex digits>
                             (with --rank-address: tcp://<address of rank 0>:<free port>)
  MMPI_LISTEN_ADDRESS        --rank-address: where this node listens,
                             tcp://<its address>:0 (rank 0: MMPI_ROOT_ADDRESS);
                             --respawn: a fixed address per rank (a replacement of
                             rank 0 rejoins through a survivor's: MMPI_ROOT_ADDRESS)
  MMPI_TRANSPORT_OPTIONS     sim only: the transport options as a JSON object (link,
                             latencyMs, bandwidth, faults, rank, worldSize)
  MMPI_WORLD_KEY             a fresh random 32-byte world key, hex-encoded (64 digits);
                             mmpirun never prints it
  MMPI_WORLD_NAME            --world-name, default mmpirun-<pid>
  MMPI_FORMATION_TIMEOUT_MS  --formation-timeout in milliseconds
  MMPI_LAUNCHER              mmpirun
  MMPI_REJOIN                --respawn only: 1 in a replacement node (WorldConfig::rejoin)
  MMPI_REJOIN_CONTACTS       --respawn only: further running members to join through, comma-separated

Output: every line a node writes to stdout (stderr) goes to mmpirun's stdout
(stderr) whole, prefixed "[rank] "; stdin of the nodes is empty.

Exit status:
  0        every node exited with status 0
  1..255   otherwise the worst status of the nodes that ended on their own:
           the largest exit code, a node killed by signal S counting as 128+S
           (134 for abort()); nodes mmpirun stopped do not count
  2        bad command line or program not found (no node was started)
  124      --timeout expired
  125      mmpirun itself failed before starting the nodes
  127      a node failed to start
  130/143  mmpirun got SIGINT/SIGTERM (it stops the nodes first)

Examples:
  mmpirun -n 4 mmpi-ring
  mmpirun -n 8 --transport tcp --timeout 120 -- ./myapp --rounds 10
  mmpirun -n 3 --keep-going --no-prefix ./myapp > all-ranks.txt
  mmpirun -n 4 --transport sim --link bluetooth --fault "rank 2 out-of-range at 3s for 4s" mmpi-ring
  mmpirun -n 4 --keep-going --kill "rank 2 at 3s" --kill "rank 3 at 3005ms" ./myapp
  mmpirun -n 2 --transport tcp --rank-prefix 'ip netns exec ns{rank}' \
          --rank-address '10.77.0.{rank+1}' mmpi-ring
)";

// Seconds as the user wrote them ("1", "0.5") to milliseconds, within what a
// QTimer and an int environment variable can hold.
Result<std::chrono::milliseconds> parseSeconds(const QString &option, const QString &text, bool zeroAllowed)
{
    bool ok = false;
    const double seconds = text.toDouble(&ok);
    const double ms = std::round(seconds * 1000.0);
    const bool inRange = ok && std::isfinite(seconds) && ms >= (zeroAllowed ? 0 : 1) && ms <= INT_MAX;
    if (!inRange)
        return usageError(u"--%1 expects %2 number of seconds, got '%3'"_s.arg(
            option, zeroAllowed ? u"a non-negative"_s : u"a positive"_s, text));
    return std::chrono::milliseconds(qint64(ms));
}

Result<int> parseNodeCount(const CommandLine &cl)
{
    if (!cl.parser.isSet(cl.nodes))
        return usageError(u"the number of nodes is missing: give -n N (1 to %1)"_s.arg(LaunchOptions::MaxNodes));
    const QString text = cl.parser.value(cl.nodes);
    bool ok = false;
    const int n = text.toInt(&ok);
    if (!ok || n < 1 || n > LaunchOptions::MaxNodes)
        return usageError(u"-n expects a number of nodes from 1 to %1, got '%2'"_s.arg(LaunchOptions::MaxNodes).arg(text));
    return n;
}

// A whole number from the command line, or a usage error naming the option.
Result<qint64> parseWhole(const QString &option, const QString &text, const QString &unit)
{
    static const QRegularExpression digits(u"^\\d{1,15}$"_s);
    if (!digits.match(text).hasMatch())
        return usageError(u"--%1 expects a whole number of %2, got '%3'"_s.arg(option, unit, text));
    return text.toLongLong();
}

// One --kill event, "rank R at T", with R one of the `nodes` ranks.
Result<KillEvent> parseKill(const QString &text, int nodes)
{
    const auto bad = [&](const QString &reason) { return usageError(u"--kill '%1': %2"_s.arg(text, reason)); };
    const QStringList words = text.simplified().split(u' ', Qt::SkipEmptyParts);
    if (words.size() != 4 || words[0] != u"rank"_s || words[2] != u"at"_s)
        return bad(u"not of the form 'rank R at T' (T like 3s, 1.5s or 250ms)"_s);
    // toInt() takes "+1"; a rank is plain digits.
    static const QRegularExpression digits(u"^\\d{1,4}$"_s);
    if (!digits.match(words[1]).hasMatch())
        return bad(u"'%1' is not a rank"_s.arg(words[1]));
    KillEvent kill;
    kill.rank = words[1].toInt();
    if (kill.rank >= nodes)
        return bad(u"rank %1 is outside 0..%2 (-n %3)"_s.arg(kill.rank).arg(nodes - 1).arg(nodes));
    const auto at = parseDuration(words[3]);
    if (!at)
        return bad(at.error().message);
    kill.at = *at;
    kill.text = words.join(u' ');
    return kill;
}

Result<void> readKills(const CommandLine &cl, LaunchOptions &options)
{
    for (const QString &text : cl.parser.values(cl.kill)) {
        const auto kill = parseKill(text, options.nodes);
        if (!kill)
            return kill.error();
        options.kills.append(*kill);
    }
    return success();
}

// The sim plugin itself judges the options, so mmpirun and the nodes can never
// disagree about them. They are tried one command-line option at a time so
// the message names the one that is wrong. The plugin starts its fault timers
// when configured; they die with the transport, long before mmpirun's event
// loop could run them.
Result<void> checkSimOptions(const CommandLine &cl, LaunchOptions &options)
{
    auto created = TransportRegistry::create(u"sim"_s);
    if (!created)
        return usageError(created.error().message);
    const std::unique_ptr<Transport> sim(*created);
    const auto check = [&](const QString &option, const QString &key, const QVariantMap &tried) -> Result<void> {
        const auto configured = sim->configure(tried);
        if (configured)
            return success();
        QString message = configured.error().message;
        const QString prefix = u"option '%1' of transport sim: "_s.arg(key);
        if (message.startsWith(prefix))
            message = message.mid(prefix.size());
        return usageError(u"--%1: %2"_s.arg(option, message));
    };

    QVariantMap accepted;
    if (cl.parser.isSet(cl.link)) {
        accepted.insert(u"link"_s, cl.parser.value(cl.link));
        if (auto ok = check(u"link"_s, u"link"_s, accepted); !ok)
            return ok;
    }
    const std::pair<const QCommandLineOption *, const char *> numbers[] = {
        {&cl.linkLatency, "latencyMs"}, {&cl.linkBandwidth, "bandwidth"}};
    for (const auto &[option, key] : numbers) {
        if (!cl.parser.isSet(*option))
            continue;
        const QString name = option->names().constFirst();
        const auto value = parseWhole(name, cl.parser.value(*option),
                                      option == &cl.linkLatency ? u"milliseconds"_s : u"bytes per second"_s);
        if (!value)
            return value.error();
        accepted.insert(QString::fromLatin1(key), *value);
        if (auto ok = check(name, QString::fromLatin1(key), accepted); !ok)
            return ok;
    }
    const QStringList faults = cl.parser.values(cl.fault);
    for (const QString &fault : faults) {
        QVariantMap tried = accepted;
        tried.insert(u"rank"_s, 0);
        tried.insert(u"worldSize"_s, options.nodes);
        tried.insert(u"faults"_s, QStringList{fault});
        if (auto ok = check(u"fault"_s, u"faults"_s, tried); !ok)
            return ok;
    }
    if (!faults.isEmpty())
        accepted.insert(u"faults"_s, faults);
    options.transportOptions = accepted;
    return success();
}

// The one value of an option that may be given at most once.
Result<std::optional<QString>> singleValue(const CommandLine &cl, const QCommandLineOption &option)
{
    const QStringList values = cl.parser.values(option);
    if (values.size() > 1)
        return usageError(u"--%1 is given %2 times; give it once"_s.arg(option.names().constFirst()).arg(values.size()));
    if (values.isEmpty())
        return std::optional<QString>();
    return std::optional(values.constFirst());
}

// --rank-prefix: each word a template; the first word of every rank's
// command resolved like the program, so that a missing command is a usage
// error before anything starts.
Result<void> readRankPrefix(const CommandLine &cl, const QString &ownDirectory, LaunchOptions &options)
{
    const auto text = singleValue(cl, cl.rankPrefix);
    if (!text)
        return text.error();
    if (!*text)
        return success();
    const QStringList words = QProcess::splitCommand(**text);
    if (words.isEmpty())
        return usageError(u"--rank-prefix is empty: give a command, e.g. 'ip netns exec ns{rank}'"_s);
    QList<RankTemplate> templates;
    for (const QString &word : words) {
        const auto parsed = RankTemplate::parse(word);
        if (!parsed)
            return usageError(u"--rank-prefix: "_s + parsed.error().message);
        templates.append(*parsed);
    }
    for (int rank = 0; rank < options.nodes; ++rank) {
        QStringList command;
        for (const RankTemplate &word : std::as_const(templates))
            command.append(word.expand(rank));
        const auto resolved = resolveProgram(command.constFirst(), ownDirectory);
        if (!resolved)
            return usageError(u"--rank-prefix: %1%2"_s.arg(resolved.error().message,
                templates.constFirst().hasPlaceholder() ? u" (rank %1)"_s.arg(rank) : QString()));
        command.first() = *resolved;
        options.rankPrefixes.append(command);
    }
    return success();
}

// --rank-address: an IP address for every rank that the others can connect to.
Result<void> readRankAddress(const CommandLine &cl, LaunchOptions &options)
{
    const auto text = singleValue(cl, cl.rankAddress);
    if (!text)
        return text.error();
    if (!*text)
        return success();
    if (options.transport != u"tcp"_s)
        return usageError(u"--rank-address needs --transport tcp"_s);
    const auto parsed = RankTemplate::parse(**text);
    if (!parsed)
        return usageError(u"--rank-address: "_s + parsed.error().message);
    // QHostAddress also takes "10.1" and "0x0a000001"; only dotted quads are
    // taken for IPv4, so that what the user reads is what the nodes get.
    static const QRegularExpression dottedQuad(uR"(^\d{1,3}(\.\d{1,3}){3}$)"_s);
    for (int rank = 0; rank < options.nodes; ++rank) {
        const QString host = parsed->expand(rank);
        QHostAddress address;
        const bool isIp = address.setAddress(host)
            && (address.protocol() == QAbstractSocket::IPv6Protocol || dottedQuad.match(host).hasMatch());
        if (!isIp)
            return usageError(u"--rank-address: '%1' (rank %2) is not an IP address"_s.arg(host).arg(rank));
        if (address == QHostAddress::AnyIPv4 || address == QHostAddress::AnyIPv6 || address.isMulticast()
            || address.isBroadcast())
            return usageError(u"--rank-address: %1 (rank %2) is not a unicast address the other nodes "
                              "could connect to"_s.arg(host).arg(rank));
        options.rankAddresses.append(address.toString());
    }
    return success();
}

Result<void> readOptions(const CommandLine &cl, const QString &ownDirectory, LaunchOptions &options)
{
    const auto nodes = parseNodeCount(cl);
    if (!nodes)
        return nodes.error();
    options.nodes = *nodes;

    options.transport = cl.parser.value(cl.transport);
    if (!knownTransports.contains(options.transport))
        return usageError(u"unknown transport '%1' (use local, tcp or sim)"_s.arg(options.transport));
    if (options.transport == u"sim"_s) {
        if (auto ok = checkSimOptions(cl, options); !ok)
            return ok;
    } else {
        for (const QCommandLineOption *simOnly : {&cl.link, &cl.linkLatency, &cl.linkBandwidth, &cl.fault}) {
            if (cl.parser.isSet(*simOnly))
                return usageError(u"--%1 needs --transport sim"_s.arg(simOnly->names().constFirst()));
        }
    }

    if (auto ok = readRankPrefix(cl, ownDirectory, options); !ok)
        return ok;
    if (auto ok = readRankAddress(cl, options); !ok)
        return ok;

    const auto timeout = parseSeconds(cl.timeout.names().constFirst(), cl.parser.value(cl.timeout), true);
    if (!timeout)
        return timeout.error();
    options.timeout = *timeout;
    const auto formation = parseSeconds(cl.formationTimeout.names().constFirst(),
                                        cl.parser.value(cl.formationTimeout), false);
    if (!formation)
        return formation.error();
    options.formationTimeout = *formation;

    if (cl.parser.isSet(cl.worldName)) {
        options.worldName = cl.parser.value(cl.worldName);
        // The world layer carries the name in control messages, strings of at most 1024 characters.
        if (options.worldName.isEmpty() || options.worldName.size() > 1024)
            return usageError(u"--world-name must have 1 to 1024 characters"_s);
    }
    options.keepGoing = cl.parser.isSet(cl.keepGoing);
    bool numeric = false;
    options.respawns = cl.parser.value(cl.respawn).toInt(&numeric);
    if (!numeric || options.respawns < 0 || options.respawns > 1000)
        return usageError(u"--respawn must be a number from 0 to 1000, not '%1'"_s.arg(cl.parser.value(cl.respawn)));
    if (auto ok = readKills(cl, options); !ok)
        return ok;
    options.prefixOutput = !cl.parser.isSet(cl.noPrefix);
    const auto binding = parseBinding(cl.parser.value(cl.bindTo));
    if (!binding)
        return usageError(u"--bind-to must be auto, core or none, not '%1'"_s.arg(cl.parser.value(cl.bindTo)));
    options.binding = *binding;
    return success();
}

} // namespace

// Like a shell: a name with '/' is a path, anything else is looked up on PATH.
// The last resort, mmpirun's own directory, lets the build tree's bin/ work
// without being on PATH.
Result<QString> resolveProgram(const QString &program, const QString &ownDirectory)
{
    if (program.isEmpty())
        return usageError(u"the program name is empty"_s);
    if (program.contains(u'/')) {
        const QFileInfo info(program);
        if (!info.exists())
            return usageError(u"program '%1' does not exist"_s.arg(program));
        return info.absoluteFilePath();
    }
    QString found = QStandardPaths::findExecutable(program);
    if (found.isEmpty() && !ownDirectory.isEmpty())
        found = QStandardPaths::findExecutable(program, {ownDirectory});
    if (found.isEmpty())
        return usageError(u"program '%1' not found on PATH or in %2"_s.arg(program, ownDirectory));
    return found;
}

Result<LaunchOptions> parseLaunchOptions(const QStringList &arguments, const QString &ownDirectory)
{
    CommandLine cl;
    if (!cl.parser.parse(arguments))
        return usageError(cl.parser.errorText());
    LaunchOptions options;
    if (cl.parser.isSet(cl.help) || cl.parser.isSet(u"help-all"_s)) {
        options.action = LaunchOptions::Action::ShowHelp;
        return options;
    }
    if (cl.parser.isSet(cl.version)) {
        options.action = LaunchOptions::Action::ShowVersion;
        return options;
    }
    if (auto read = readOptions(cl, ownDirectory, options); !read)
        return read.error();

    QStringList positional = cl.parser.positionalArguments();
    if (positional.isEmpty())
        return usageError(u"no program given: mmpirun -n N [options] [--] program [args...]"_s);
    const auto program = resolveProgram(positional.takeFirst(), ownDirectory);
    if (!program)
        return program.error();
    options.program = *program;
    options.arguments = positional;
    return options;
}

QString launchHelpText()
{
    CommandLine cl;
    return cl.parser.helpText() + QString::fromUtf8(epilogue);
}

} // namespace mmpi::tools
