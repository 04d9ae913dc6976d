// LaunchOptions: what one mmpirun invocation asks for, parsed and validated from
// the command line before anything starts, so that every usage error is reported
// (exit status 2) while no node is running yet.
#pragma once

#include "cpubinding.h"

#include <mmpi/core/result.h>

#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <chrono>

namespace mmpi::tools {

// --kill "rank R at T": mmpirun sends SIGKILL to the process holding `rank`
// `at` after it started the nodes, as a user's `kill -9` would.
struct KillEvent
{
    int rank = 0;
    std::chrono::milliseconds at{0};
    // The event as given, spaces normalised, for mmpirun's messages.
    QString text;
};

struct LaunchOptions
{
    enum class Action { Run, ShowHelp, ShowVersion };

    static constexpr int MaxNodes = 256;

    Action action = Action::Run;
    int nodes = 0;
    QString transport = QStringLiteral("local");
    // sim only: the link options of every node (--link, --link-latency,
    // --link-bandwidth, --fault), already accepted by the sim plugin. Each
    // node also gets its rank and the world size (LaunchEnvironment).
    QVariantMap transportOptions;
    // Zero: no limit.
    std::chrono::milliseconds timeout{0};
    std::chrono::milliseconds formationTimeout{30000};
    // Empty: "mmpirun-<pid>".
    QString worldName;
    // --rank-prefix: per rank, the words the node's command starts with (the
    // first one resolved like the program), placeholders filled in. Empty:
    // the program runs as it is.
    QList<QStringList> rankPrefixes;
    // --rank-address (tcp only): per rank, the IP address it listens on.
    // Empty: rank 0 on 127.0.0.1, the others where the transport chooses.
    QStringList rankAddresses;
    bool keepGoing = false;
    // --respawn: how many times in all a node (rank 1 or more) that crashed
    // or failed is started again as a replacement (MMPI_REJOIN=1), for
    // REBUILD. 0: never.
    int respawns = 0;
    // --kill, in the order given (any transport).
    QList<KillEvent> kills;
    bool prefixOutput = true;
    // --bind-to: which CPU each node runs on (cpubinding.h).
    Binding binding = Binding::Auto;
    // Resolved like a shell would (see resolveProgram) and made absolute.
    QString program;
    QStringList arguments;
};

// `arguments` as QCoreApplication::arguments() gives them; `ownDirectory` is
// where mmpirun lives, searched for the program after PATH so that
// `mmpirun -n 4 mmpi-ring` works in the build tree. The error message is ready
// to print after "mmpirun: ".
Result<LaunchOptions> parseLaunchOptions(const QStringList &arguments, const QString &ownDirectory);

// Finds the program like a shell: a name containing '/' is a path (it must
// exist), anything else is searched on PATH and then in `ownDirectory`.
Result<QString> resolveProgram(const QString &program, const QString &ownDirectory);

// The full --help text: usage, every option with its default, the environment
// contract, exit statuses and examples.
QString launchHelpText();

} // namespace mmpi::tools
