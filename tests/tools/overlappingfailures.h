// Overlapping failures under mmpirun: two ranks of a 4-node world killed with
// SIGKILL from outside (mmpirun --kill) a few milliseconds apart, with each
// fault-tolerance policy. Shared by tst_mmpirun_ft (one run per case) and
// tst_mmpirun_ftsoak (many runs per delay, label soak).
#pragma once

#include "processrun.h"

#include <QList>
#include <QTemporaryDir>

namespace mmpi::test {

// When the first kill lands: well inside the apps' loops (formation takes a
// few hundred ms on this machine's loopback, the loops run for seconds).
constexpr int FirstKillMs = 1500;

inline QStringList killsApart(int first, int second, int gapMs)
{
    return {QStringLiteral("--kill"), QStringLiteral("rank %1 at %2ms").arg(first).arg(FirstKillMs),
            QStringLiteral("--kill"), QStringLiteral("rank %1 at %2ms").arg(second).arg(FirstKillMs + gapMs)};
}

// REBUILD with --respawn 2 over the local transport (real sockets): the
// rebuild app's checkpoints every 25 iterations, each rank in its store's
// default directory under `home`, where its replacement on this machine
// finds them. (With one partner copy on the next rank, as in a world of new
// devices, two neighbours lost together take one state with them.)
constexpr qint64 RebuildIterations = 500;

inline ProcessRun runRebuildWithTwoKills(int first, int second, int gapMs, const QString &home)
{
    RunOptions options;
    options.environment = systemEnvironmentWith(
        {{QStringLiteral("HOME"), home}, {QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/share")}});
    return runMmpirun(QStringList{QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--transport"),
                                  QStringLiteral("local"), QStringLiteral("--respawn"), QStringLiteral("2"),
                                  QStringLiteral("--timeout"), QStringLiteral("90")}
                          + killsApart(first, second, gapMs)
                          + QStringList{QStringLiteral(MMPIRUN_REBUILDAPP_PATH), QStringLiteral("--iterations"),
                                        QString::number(RebuildIterations), QStringLiteral("--every"),
                                        QStringLiteral("25"), QStringLiteral("--pause-ms"), QStringLiteral("4")},
                      options);
}

// Empty when every rank, both replacements too, ended with the total of a
// run without failures: rank r adds (r + 1) * 10 * i for i = 1..N.
inline QString rebuildProblem(const ProcessRun &r, int first, int second)
{
    if (r.exitCode != 0)
        return QStringLiteral("mmpirun exited with %1").arg(r.exitCode);
    for (int victim : {first, second})
        if (!r.err.contains(QStringLiteral("node %1 crashed with signal 9 (SIGKILL").arg(victim)))
            return QStringLiteral("rank %1 was not killed").arg(victim);
    for (int rank = 0; rank < 4; ++rank) {
        const qint64 total = (rank + 1) * 10 * RebuildIterations * (RebuildIterations + 1) / 2;
        const QString done = QStringLiteral("event=done iterations=%1 total=%2 rank=%3")
                                 .arg(RebuildIterations).arg(total).arg(rank);
        if (r.lines(rank, done).size() != 1)
            return QStringLiteral("rank %1 did not end with total %2").arg(rank).arg(total);
    }
    return {};
}

// SHRINK, BLANK or ABORT with the fault app: a sum per millisecond.
inline ProcessRun runPolicyWithTwoKills(const QString &policy, int first, int second, int gapMs)
{
    return runMmpirun(QStringList{QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--transport"),
                                  QStringLiteral("local"), QStringLiteral("--keep-going"), QStringLiteral("--timeout"),
                                  QStringLiteral("90")}
                      + killsApart(first, second, gapMs)
                      + QStringList{QStringLiteral(MMPIRUN_FTAPP_PATH), QStringLiteral("--policy"), policy,
                                    QStringLiteral("--iterations"), QStringLiteral("2500"),
                                    QStringLiteral("--pause-ms"), QStringLiteral("1")});
}

// What mmpirun said about node `rank` ("node 2 crashed with signal 9 ..."), for a message.
inline QString mmpirunSaid(const ProcessRun &r, int rank)
{
    QStringList said;
    const QString node = QStringLiteral("node %1 ").arg(rank);
    for (const QString &line : r.err.split(QLatin1Char('\n')))
        if (line.contains(node))
            said << line.trimmed();
    return said.isEmpty() ? QStringLiteral("mmpirun said nothing of it") : said.join(QStringLiteral(" | "));
}

// Empty when a SHRINK, BLANK or ABORT run with two kills ended as the policy
// says on every survivor; else which rank did not, and what was seen of it.
inline QString policyProblem(const ProcessRun &r, const QString &policy, int first, int second)
{
    const auto killed = [&r](int rank) {
        return r.err.contains(QStringLiteral("node %1 crashed with signal 9 (SIGKILL").arg(rank));
    };
    const QString aborting = QStringLiteral("event=aborted reason=aborting: lost rank ");
    if (!killed(first))
        return QStringLiteral("rank %1 was not killed: %2").arg(first).arg(mmpirunSaid(r, first));
    // Under ABORT the second may have ended by itself before its kill came.
    const bool secondAborted = policy == QLatin1String("abort") && r.lines(second, aborting).size() == 1;
    if (!killed(second) && !secondAborted)
        return QStringLiteral("rank %1 was neither killed nor aborted: %2").arg(second).arg(mmpirunSaid(r, second));
    QList<int> survivors;
    for (int rank = 0; rank < 4; ++rank)
        if (rank != first && rank != second)
            survivors << rank;
    for (int rank : survivors) {
        const QString which = QStringLiteral("survivor %1 ").arg(rank);
        if (!r.lines(rank, QStringLiteral("event=wrong")).isEmpty())
            return which + QStringLiteral("summed wrong");
        if (policy == QLatin1String("abort")) {
            const QStringList aborted = r.lines(rank, aborting);
            if (aborted.size() != 1 || !aborted.first().contains(QStringLiteral("the policy is ABORT")))
                return which + QStringLiteral("did not abort once for ABORT (%1 aborted lines)").arg(aborted.size());
            if (!r.err.contains(QStringLiteral("node %1 exited with status 5").arg(rank)))
                return which + QStringLiteral("aborted but did not exit with status 5: ") + mmpirunSaid(r, rank);
            continue;
        }
        const QString done = policy == QLatin1String("shrink")
            ? QStringLiteral("event=done iterations=2500 size=2 rank=%1 ").arg(survivors.indexOf(rank))
            : QStringLiteral("event=done iterations=2500 size=4 rank=%1 blank=%2,%3").arg(rank).arg(first).arg(second);
        if (r.lines(rank, done).size() != 1)
            return which + QStringLiteral("did not print '%1': %2").arg(done, mmpirunSaid(r, rank));
    }
    if (policy != QLatin1String("abort") && r.exitCode == 124)
        return QStringLiteral("the job hung (mmpirun timed out)");
    return {};
}

} // namespace mmpi::test
