// What the world's network-namespace tests share (they need root and `ip`,
// else they skip saying why): running a setup command, the reason a test
// cannot have namespaces, and a program started inside a namespace whose
// output lines are read as they come.
#pragma once

#include "processrun.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QStringList>

#include <unistd.h>

namespace mmpi::test {

// Runs a setup command; on failure the first error is kept in `error`, if given.
inline bool runCommand(const QString &program, const QStringList &args, QString *error)
{
    const ProcessRun r = runProcess(program, args, {.timeoutMs = 10000});
    if (r.exitCode != 0 && error && error->isEmpty())
        *error = QStringLiteral("%1 %2: %3").arg(program, args.join(u' '), r.err.trimmed());
    return r.exitCode == 0;
}

// Why this process cannot make namespaces with `tools`, or nothing.
inline QString whyNoNamespaces(const QStringList &tools)
{
    if (::geteuid() != 0)
        return QStringLiteral("network namespaces need root (run the test as root to include it)");
    for (const QString &tool : tools)
        if (QStandardPaths::findExecutable(tool).isEmpty())
            return QStringLiteral("the '%1' command is not installed").arg(tool);
    return {};
}

// `program args` inside namespace `ns` (ip netns exec), killed if still
// running when this goes.
class NamespacedProcess
{
public:
    NamespacedProcess(const QString &ns, const QString &program, const QStringList &args)
    {
        m_process.start(QStringLiteral("ip"), QStringList{QStringLiteral("netns"), QStringLiteral("exec"), ns, program}
                                                  + args);
    }
    ~NamespacedProcess()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    NamespacedProcess(const NamespacedProcess &) = delete;
    NamespacedProcess &operator=(const NamespacedProcess &) = delete;

    // Waits up to `ms` for a line that starts with `prefix`.
    QString waitForLine(const QString &prefix, int ms)
    {
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < ms) {
            if (const QString line = lineStarting(prefix); !line.isEmpty())
                return line;
            if (m_process.state() == QProcess::NotRunning)
                break;
            m_process.waitForReadyRead(100);
        }
        return lineStarting(prefix);
    }
    bool finishedWell(int ms)
    {
        m_process.waitForFinished(ms);
        lines();
        return m_process.exitStatus() == QProcess::NormalExit && m_process.exitCode() == 0;
    }
    // SIGTERM, for a program that runs until told to stop.
    void terminate() { m_process.terminate(); }
    QString output()
    {
        lines();
        return m_out + QStringLiteral("\n--- stderr\n") + m_err;
    }

private:
    QStringList lines()
    {
        m_out += QString::fromUtf8(m_process.readAllStandardOutput());
        m_err += QString::fromUtf8(m_process.readAllStandardError());
        return m_out.split(u'\n');
    }
    QString lineStarting(const QString &prefix)
    {
        for (const QString &line : lines())
            if (line.startsWith(prefix))
                return line;
        return {};
    }

    QProcess m_process;
    QString m_out, m_err;
};

} // namespace mmpi::test
