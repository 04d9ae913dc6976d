#include "launcher.h"

#include "lineforwarder.h"

#include <mmpi/core/logging.h>

#include <QDir>
#include <QFile>

#include <csignal>
#include <cstdio>

#include <sys/resource.h>
#include <sys/stat.h>
#ifdef Q_OS_LINUX
#include <sys/prctl.h>
#endif

namespace mmpi::tools {

namespace {

using namespace Qt::StringLiterals;

// Statuses as a shell reports them.
constexpr int StartFailedStatus = 127;
constexpr int TimeoutStatus = 124;
// For a crash whose signal Qt could not tell: counted as abort().
constexpr int UnknownCrashStatus = 128 + SIGABRT;

void say(const QString &message)
{
    std::fputs(qPrintable(u"mmpirun: "_s + message + u'\n'), stderr);
    std::fflush(stderr);
}

// "0, 1, 4-9": runs of three or more ranks are shortened to a range.
QString rankList(const QList<int> &ranks)
{
    QStringList parts;
    for (qsizetype i = 0; i < ranks.size();) {
        qsizetype j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (j - i >= 2) {
            parts << u"%1-%2"_s.arg(ranks[i]).arg(ranks[j]);
        } else {
            for (qsizetype k = i; k <= j; ++k)
                parts << QString::number(ranks[k]);
        }
        i = j + 1;
    }
    return parts.join(u", "_s);
}

QString seconds(std::chrono::milliseconds ms)
{
    return QString::number(double(ms.count()) / 1000.0);
}

// mmpirun holds a few descriptors per node (output pipes, process descriptor,
// start-up pipe); 256 nodes need more than the common soft limit of 1024. The
// returned original limit is what the nodes get back, since programs that use
// select() break with descriptors past 1024.
rlimit raiseOpenFileLimit(qsizetype nodes)
{
    constexpr rlim_t DescriptorsPerNode = 8;
    rlimit limit = {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return {RLIM_INFINITY, RLIM_INFINITY};
    const rlimit original = limit;
    const rlim_t wanted = rlim_t(nodes) * DescriptorsPerNode + 64;
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
        limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : qMin(wanted, limit.rlim_max);
        if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
            qCDebug(lcTools) << "could not raise the open file limit to" << quint64(limit.rlim_cur);
    }
    return original;
}

// A node that crashed or was killed leaves the socket files its local (or
// sim) transport listened on, named after its process id
// (mmpi-<pid>-<random>, LocalTransport::uniqueServerName()): sockets only.
void removeLeftoverSockets(const QString &tempDir, qint64 pid)
{
    if (pid <= 0)
        return;
    const QDir dir(tempDir);
    const QStringList names = dir.entryList({u"mmpi-%1-*"_s.arg(pid)}, QDir::System | QDir::Files | QDir::Hidden);
    for (const QString &name : names) {
        const QByteArray path = QFile::encodeName(dir.filePath(name));
        struct stat info = {};
        if (::lstat(path.constData(), &info) == 0 && S_ISSOCK(info.st_mode) && ::unlink(path.constData()) == 0)
            qCDebug(lcTools) << "removed" << path << "left by process" << pid;
    }
}

QByteArray prefixFor(int rank, bool enabled)
{
    return enabled ? "[" + QByteArray::number(rank) + "] " : QByteArray();
}

} // namespace

struct Launcher::Node
{
    enum class State { NotStarted, Running, Finished, FailedToStart };

    Node(int r, bool prefix) : rank(r), out(prefixFor(r, prefix), stdout), err(prefixFor(r, prefix), stderr) {}

    // What the summary says about this node.
    QString description() const
    {
        if (state == State::NotStarted || (state == State::FailedToStart && stopRequested))
            return u"not started"_s;
        if (killed)
            return u"killed by mmpirun after the %1 s grace period"_s.arg(seconds(GracePeriod));
        if (stopRequested)
            return u"stopped by mmpirun"_s;
        return outcome;
    }

    // Why a --kill found no process to kill.
    QString absence() const
    {
        if (state == State::Finished)
            return u"it "_s + outcome;
        if (state == State::Running)
            return u"its replacement is not started yet"_s;
        return u"it is not started"_s;
    }

    const int rank;
    QProcess process;
    LineForwarder out;
    LineForwarder err;
    State state = State::NotStarted;
    // Set when mmpirun asked the node to stop; its own status then does not count.
    bool stopRequested = false;
    bool killed = false;
    bool replacement = false; // started again by --respawn
    // The --kill event that sent SIGKILL to the current process, if any.
    QString killedBy;
    qint64 pid = 0; // of the last process started
    // Shell-style: exit code, 128 + signal, or 127 if it did not start.
    int status = 0;
    QString outcome;
};

Launcher::Launcher(LaunchOptions options, LaunchEnvironment environment, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_environment(std::move(environment)),
      m_respawnsLeft(m_options.respawns)
{
    for (int rank = 0; rank < m_options.nodes; ++rank) {
        m_nodes.push_back(std::make_unique<Node>(rank, m_options.prefixOutput));
        connectNode(*m_nodes.back());
    }
    m_timeout.setSingleShot(true);
    m_grace.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, &Launcher::onTimeout);
    connect(&m_grace, &QTimer::timeout, this, &Launcher::onGraceExpired);
    connect(&m_signals, &SignalWatcher::received, this, &Launcher::onSignal);
}

Launcher::~Launcher()
{
    // A QProcess destroyed while running kills and waits for its node; its
    // signals must not reach a half-destroyed launcher then.
    for (auto &node : m_nodes)
        node->process.disconnect(this);
}

void Launcher::connectNode(Node &node)
{
    QProcess *process = &node.process;
    connect(process, &QProcess::readyReadStandardOutput, this,
            [&node] { node.out.append(node.process.readAllStandardOutput()); });
    connect(process, &QProcess::readyReadStandardError, this,
            [&node] { node.err.append(node.process.readAllStandardError()); });
    connect(process, &QProcess::started, this, [&node] { node.pid = node.process.processId(); });
    connect(process, &QProcess::finished, this,
            [this, &node](int code, QProcess::ExitStatus status) { onNodeFinished(node, code, status); });
    connect(process, &QProcess::errorOccurred, this, [this, &node](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            onStartFailed(node);
        else
            qCDebug(lcTools) << "node" << node.rank << "process error:" << node.process.errorString();
    });
}

void Launcher::start()
{
    if (m_options.timeout.count() > 0)
        m_timeout.start(m_options.timeout);
    const rlimit fileLimit = raiseOpenFileLimit(qsizetype(m_nodes.size()));
    m_childSetup = [fileLimit] {
        // Only async-signal-safe calls here: this runs between fork and exec.
        if (fileLimit.rlim_cur != RLIM_INFINITY)
            ::setrlimit(RLIMIT_NOFILE, &fileLimit);
#ifdef Q_OS_LINUX
        // If mmpirun itself is killed (SIGKILL cannot be forwarded), the nodes still go.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    };
    if (!m_environment.cpus().isEmpty())
        qCDebug(lcTools) << "nodes bound to CPUs" << m_environment.cpus();
    m_environment.releasePorts();
    m_sinceStart.start();
    for (auto &node : m_nodes) {
        // A node that failed to start at once has already stopped the job.
        if (m_cause != StopCause::None)
            break;
        startNode(*node);
    }
    if (m_cause == StopCause::None)
        scheduleKills();
    finishIfDone();
}

void Launcher::startNode(Node &node)
{
    node.process.setProcessEnvironment(node.replacement ? m_environment.forReplacement(node.rank, runningRanks())
                                                        : m_environment.forRank(node.rank));
    // Nodes read no input; an open pipe nobody writes to would block them forever.
    node.process.setStandardInputFile(QProcess::nullDevice());
    node.process.setChildProcessModifier([setup = m_childSetup, cpu = m_environment.cpus().value(node.rank, -1)] {
        setup();
        bindThisProcessTo(cpu);
    });
    node.state = Node::State::Running;
    node.killedBy.clear();
    // With --rank-prefix the prefix's command runs and starts the program
    // (ip netns exec, taskset, env, ...).
    QStringList command = m_options.rankPrefixes.value(node.rank);
    command << m_options.program << m_options.arguments;
    qCDebug(lcTools) << "starting node" << node.rank << command;
    const QString program = command.takeFirst();
    node.process.start(program, command);
}

void Launcher::onStartFailed(Node &node)
{
    node.state = Node::State::FailedToStart;
    node.status = StartFailedStatus;
    node.outcome = u"failed to start: "_s + node.process.errorString();
    if (!node.stopRequested) {
        say(u"node %1 %2"_s.arg(node.rank).arg(node.outcome));
        // Without this node the world cannot form, --keep-going or not.
        stopNodes(StopCause::StartFailed);
    }
    finishIfDone();
}

void Launcher::onNodeFinished(Node &node, int exitCode, QProcess::ExitStatus exitStatus)
{
    // A Ctrl-C reaches the nodes as well; act on it before blaming the node.
    m_signals.poll();
    node.out.append(node.process.readAllStandardOutput());
    node.err.append(node.process.readAllStandardError());
    node.out.flush();
    node.err.flush();
    node.state = Node::State::Finished;
    const QProcessEnvironment environment = node.process.processEnvironment();
    removeLeftoverSockets(environment.isEmpty() ? QDir::tempPath() : environment.value(u"TMPDIR"_s, u"/tmp"_s),
                          node.pid);
    if (exitStatus == QProcess::CrashExit) {
        // On Unix Qt reports the terminating signal as the exit code of a crash.
        const bool known = exitCode > 0 && exitCode < 128;
        node.status = known ? 128 + exitCode : UnknownCrashStatus;
        node.outcome = known ? u"crashed with signal %1 (%2)"_s.arg(exitCode).arg(signalName(exitCode))
                             : u"crashed"_s;
        // A crash all the same, but one the user asked for.
        if (exitCode == SIGKILL && !node.killedBy.isEmpty())
            node.outcome += u", sent by --kill '%1'"_s.arg(node.killedBy);
    } else {
        node.status = exitCode;
        node.outcome = u"exited with status %1"_s.arg(exitCode);
    }
    qCDebug(lcTools) << "node" << node.rank << node.outcome;
    if (!node.stopRequested && node.status != 0 && !respawn(node))
        reportFailure(node);
    finishIfDone();
}

// The world keeps the failed rank for a replacement (REBUILD) only if the
// app's policy says so; mmpirun just provides the new process.
bool Launcher::respawn(Node &node)
{
    if (m_respawnsLeft == 0 || m_cause != StopCause::None)
        return false;
    // Rank 0's replacement rejoins through a survivor, found at its fixed address.
    if (node.rank == 0 && (!m_environment.knowsEveryAddress() || contactFor(0) < 0))
        return false;
    --m_respawnsLeft;
    say(u"node %1 %2; starting a replacement in rank %1 (MMPI_REJOIN=1; %3 more respawn(s) allowed)"_s
            .arg(node.rank)
            .arg(node.outcome)
            .arg(m_respawnsLeft));
    node.state = Node::State::Running;
    node.replacement = true;
    // Not from inside the old process's finished() signal.
    QTimer::singleShot(0, this, [this, &node] {
        if (m_cause == StopCause::None)
            return startNode(node);
        node.state = Node::State::NotStarted;
        finishIfDone();
    });
    return true;
}

void Launcher::reportFailure(const Node &node)
{
    const QString what = u"node %1 %2"_s.arg(node.rank).arg(node.outcome);
    const bool othersRunning = !runningRanks().isEmpty();
    if (m_options.keepGoing) {
        say(othersRunning ? what + u" (--keep-going: the other nodes continue)"_s : what);
        return;
    }
    say(othersRunning && m_cause == StopCause::None
            ? what + u"; stopping the other nodes (use --keep-going to let them finish)"_s
            : what);
    stopNodes(StopCause::NodeFailed);
}

void Launcher::onTimeout()
{
    say(u"timeout after %1 s; nodes still running: %2"_s.arg(seconds(m_options.timeout), rankList(runningRanks())));
    stopNodes(StopCause::Timeout);
}

void Launcher::onSignal(int signal)
{
    if (m_finished)
        return;
    if (m_cause != StopCause::None) {
        // Already stopping: a second request means now.
        say(u"received %1 while stopping; killing the nodes"_s.arg(signalName(signal)));
        killNodes();
        return;
    }
    say(u"received %1; stopping the nodes"_s.arg(signalName(signal)));
    m_signal = signal;
    stopNodes(StopCause::Signal);
}

void Launcher::onGraceExpired()
{
    const QList<int> ranks = runningRanks();
    if (ranks.isEmpty())
        return;
    say(u"node(s) %1 still running %2 s after SIGTERM; killing them"_s.arg(rankList(ranks), seconds(GracePeriod)));
    killNodes();
}

// Each timer counts from the same start, not from when the one before fired,
// so that kills a few milliseconds apart stay that far apart however long
// starting the nodes took; precise timers, as coarse ones may fire 5% early
// or late.
void Launcher::scheduleKills()
{
    for (const KillEvent &kill : std::as_const(m_options.kills)) {
        auto timer = std::make_unique<QTimer>();
        timer->setSingleShot(true);
        timer->setTimerType(Qt::PreciseTimer);
        connect(timer.get(), &QTimer::timeout, this, [this, kill] { onKill(kill); });
        timer->start(int(qMax<qint64>(0, kill.at.count() - m_sinceStart.elapsed())));
        m_kills.push_back(std::move(timer));
    }
}

void Launcher::onKill(const KillEvent &kill)
{
    Node &node = *m_nodes[size_t(kill.rank)];
    if (node.state != Node::State::Running || node.process.state() == QProcess::NotRunning) {
        say(u"--kill '%1' skipped: node %2 is not running (%3)"_s.arg(kill.text).arg(kill.rank).arg(node.absence()));
        return;
    }
    qCDebug(lcTools) << "--kill" << kill.text << "at" << m_sinceStart.elapsed() << "ms: SIGKILL to process"
                     << node.process.processId();
    node.killedBy = kill.text;
    node.process.kill();
}

// Once the job is being stopped the nodes' ends are mmpirun's doing; a kill
// then would only blur what the summary says.
void Launcher::stopKills()
{
    for (const auto &timer : m_kills)
        timer->stop();
}

void Launcher::stopNodes(StopCause cause)
{
    if (m_cause != StopCause::None)
        return;
    m_cause = cause;
    m_timeout.stop();
    stopKills();
    bool any = false;
    for (auto &node : m_nodes) {
        if (node->state != Node::State::Running)
            continue;
        node->stopRequested = true;
        // A node whose death is being reported right now has no process left to signal.
        if (node->process.state() != QProcess::NotRunning)
            node->process.terminate();
        any = true;
    }
    if (any)
        m_grace.start(GracePeriod);
}

void Launcher::killNodes()
{
    m_grace.stop();
    for (auto &node : m_nodes) {
        if (node->state != Node::State::Running || node->process.state() == QProcess::NotRunning)
            continue;
        node->stopRequested = true;
        node->killed = true;
        node->process.kill();
    }
}

void Launcher::finishIfDone()
{
    if (m_finished || !runningRanks().isEmpty())
        return;
    m_finished = true;
    m_timeout.stop();
    m_grace.stop();
    stopKills();
    const int status = exitStatus();
    if (status != 0)
        printSummary(status);
    Q_EMIT finished(status);
}

int Launcher::exitStatus() const
{
    if (m_cause == StopCause::Timeout)
        return TimeoutStatus;
    if (m_cause == StopCause::Signal)
        return 128 + m_signal;
    // The worst status of the nodes that ended on their own.
    int worst = 0;
    for (const auto &node : m_nodes) {
        const bool ended = node->state == Node::State::Finished || node->state == Node::State::FailedToStart;
        if (ended && !node->stopRequested)
            worst = qMax(worst, node->status);
    }
    return worst;
}

void Launcher::printSummary(int status) const
{
    QString headline;
    switch (m_cause) {
    case StopCause::Timeout:
        headline = u"job timed out"_s;
        break;
    case StopCause::Signal:
        headline = u"job interrupted by %1"_s.arg(signalName(m_signal));
        break;
    default:
        headline = u"job failed"_s;
        break;
    }
    say(u"%1 (exit status %2):"_s.arg(headline).arg(status));
    // One line per distinct outcome, in rank order of first appearance.
    QStringList descriptions;
    QList<QList<int>> ranks;
    for (const auto &node : m_nodes) {
        const QString description = node->description();
        qsizetype index = descriptions.indexOf(description);
        if (index < 0) {
            descriptions << description;
            ranks.append(QList<int>());
            index = descriptions.size() - 1;
        }
        ranks[index] << node->rank;
    }
    for (qsizetype i = 0; i < descriptions.size(); ++i) {
        const QString who = ranks[i].size() == 1 ? u"node "_s : u"nodes "_s;
        say(u"  %1%2: %3"_s.arg(who, rankList(ranks[i]), descriptions[i]));
    }
}

// The member a replacement of `rank` rejoins through: the root, or for rank
// 0 the lowest other rank still running; -1 if there is none.
int Launcher::contactFor(int rank) const
{
    if (rank != 0)
        return 0;
    for (int running : runningRanks())
        if (running != rank)
            return running;
    return -1;
}

QList<int> Launcher::runningRanks() const
{
    QList<int> ranks;
    for (const auto &node : m_nodes) {
        if (node->state == Node::State::Running)
            ranks << node->rank;
    }
    return ranks;
}

} // namespace mmpi::tools
