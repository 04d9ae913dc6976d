// Runs a program (mmpirun, a demo, a tool) as a child process for a test and
// keeps what it did: exit code, stdout, stderr, time taken. A run that outlives
// its timeout is killed, so a hung child fails the test instead of hanging it.
#pragma once

#include <QElapsedTimer>
#include <QProcess>
#include <QStringList>

#include <initializer_list>
#include <optional>
#include <utility>

namespace mmpi::test {

struct ProcessRun
{
    bool finished = false; // false: killed at the timeout, or never started
    int exitCode = -1;     // -1 unless the process exited normally
    QString out;
    QString err;
    qint64 elapsedMs = 0;
    qint64 pid = 0;

    // Everything, for a failed check's message (QTest cuts it at about
    // 1,000 characters: print it yourself when more matters).
    QString dump() const
    {
        return QStringLiteral("exit %1 after %2 ms%3\n--- stdout\n%4\n--- stderr\n%5")
            .arg(exitCode)
            .arg(elapsedMs)
            .arg(finished ? QString() : QStringLiteral(" (did not finish)"), out, err);
    }

    // The stdout lines of rank `rank` (as mmpirun prefixes them, "[rank] ")
    // that start with `prefix`.
    QStringList lines(int rank, const QString &prefix) const
    {
        const QString start = QStringLiteral("[%1] %2").arg(rank).arg(prefix);
        QStringList found;
        for (const QString &line : out.split(QLatin1Char('\n')))
            if (line.startsWith(start))
                found << line;
        return found;
    }
};

struct RunOptions
{
    int timeoutMs = 120000;
    std::optional<QProcessEnvironment> environment = std::nullopt; // none: this process's own
};

// This process's environment with `variables` set.
inline QProcessEnvironment systemEnvironmentWith(std::initializer_list<std::pair<QString, QString>> variables)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const auto &[name, value] : variables)
        env.insert(name, value);
    return env;
}

// Waits for a process already started (and perhaps partly read) to end,
// killing it after `timeoutMs`; elapsedMs counts from this call.
inline ProcessRun finishProcess(QProcess &process, int timeoutMs)
{
    ProcessRun run;
    QElapsedTimer clock;
    clock.start();
    run.pid = process.processId();
    run.finished = process.waitForFinished(timeoutMs);
    if (!run.finished) {
        process.kill();
        process.waitForFinished(5000);
    }
    run.elapsedMs = clock.elapsed();
    if (run.finished && process.exitStatus() == QProcess::NormalExit)
        run.exitCode = process.exitCode();
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = process.error() == QProcess::FailedToStart ? process.errorString()
                                                         : QString::fromUtf8(process.readAllStandardError());
    return run;
}

inline ProcessRun runProcess(const QString &program, const QStringList &args, const RunOptions &options = {})
{
    QProcess process;
    if (options.environment)
        process.setProcessEnvironment(*options.environment);
    QElapsedTimer clock;
    clock.start();
    process.start(program, args);
    const qint64 pid = process.processId();
    ProcessRun run = finishProcess(process, options.timeoutMs);
    run.pid = pid;
    run.elapsedMs = clock.elapsed();
    return run;
}

#ifdef MMPIRUN_PATH
inline ProcessRun runMmpirun(const QStringList &args, const RunOptions &options = {})
{
    return runProcess(QStringLiteral(MMPIRUN_PATH), args, options);
}
#endif

} // namespace mmpi::test
