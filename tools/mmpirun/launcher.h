// Launcher: runs one mmpirun job. It owns one QProcess per node, forwards their
// output line by line, kills ranks as --kill says, stops the job when a node
// fails, the timeout expires or mmpirun is signalled, and works out the exit
// status (docs/guide/mmpirun.md).
#pragma once

#include "launchenvironment.h"
#include "launchoptions.h"
#include "signalwatcher.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QTimer>

#include <functional>
#include <memory>
#include <vector>

namespace mmpi::tools {

class Launcher : public QObject
{
    Q_OBJECT
public:
    // How long a node may take to exit after SIGTERM before it gets SIGKILL.
    static constexpr std::chrono::milliseconds GracePeriod{3000};

    Launcher(LaunchOptions options, LaunchEnvironment environment, QObject *parent = nullptr);
    ~Launcher() override;

    // Starts rank 0, then every other rank at once (the world layer retries
    // joining the root until its formation deadline). finished() follows
    // exactly once, from the event loop.
    void start();

Q_SIGNALS:
    void finished(int exitStatus);

private:
    struct Node;
    // Why the job is being stopped; the first cause wins.
    enum class StopCause { None, StartFailed, NodeFailed, Timeout, Signal };

    void connectNode(Node &node);
    void startNode(Node &node);
    void onStartFailed(Node &node);
    bool respawn(Node &node);
    void onNodeFinished(Node &node, int exitCode, QProcess::ExitStatus exitStatus);
    void onTimeout();
    void onSignal(int signal);
    void onGraceExpired();
    void scheduleKills();
    void onKill(const KillEvent &kill);
    void stopKills();

    void reportFailure(const Node &node);
    void stopNodes(StopCause cause);
    void killNodes();
    void finishIfDone();
    int exitStatus() const;
    void printSummary(int status) const;
    QList<int> runningRanks() const;
    int contactFor(int rank) const;

    LaunchOptions m_options;
    LaunchEnvironment m_environment;
    std::vector<std::unique_ptr<Node>> m_nodes;
    SignalWatcher m_signals;
    QTimer m_timeout;
    QTimer m_grace;
    // Since the nodes were started: the one time base of every --kill.
    QElapsedTimer m_sinceStart;
    std::vector<std::unique_ptr<QTimer>> m_kills;
    // Runs in each node's process between fork and exec.
    std::function<void()> m_childSetup;
    StopCause m_cause = StopCause::None;
    int m_signal = 0;
    bool m_finished = false;
    int m_respawnsLeft = 0;
};

} // namespace mmpi::tools
