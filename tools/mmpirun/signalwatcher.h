// SignalWatcher: turns SIGINT and SIGTERM sent to mmpirun into a Qt signal on
// the main thread, so that the launcher can stop its nodes and exit 130/143
// instead of dying and leaving them behind.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

namespace mmpi::tools {

class SignalWatcher : public QObject
{
    Q_OBJECT
public:
    // Installs the handlers; only one watcher may exist at a time.
    explicit SignalWatcher(QObject *parent = nullptr);
    // Restores the default actions.
    ~SignalWatcher() override;

    // Emits received() now if a signal arrived since the last check. Also
    // called every 50 ms; call it directly before acting on a node's death,
    // because a Ctrl-C reaches the nodes too and they may die of it first.
    void poll();

Q_SIGNALS:
    void received(int signal);

private:
    QTimer m_timer;
};

// "SIGABRT" for 6 and so on; "signal N" for the ones not listed.
QString signalName(int signal);

} // namespace mmpi::tools
