// WhiteboardHost: what the QML board needs from the C++ side — the options,
// the scripted strokes, file paths with {rank}, saving and grabbing the
// window, and ending the process with a status in headless mode.
#pragma once

#include "whiteboardoptions.h"

#include <QObject>
#include <QSize>
#include <QVariantMap>

class QQuickWindow;

namespace mmpi::whiteboard {

class WhiteboardHost : public QObject
{
    Q_OBJECT
    Q_PROPERTY(QString transport READ transport CONSTANT)
    Q_PROPERTY(bool discovered READ discovered CONSTANT)
    Q_PROPERTY(int size READ size CONSTANT)
    Q_PROPERTY(bool host READ host CONSTANT)
    Q_PROPERTY(bool choose READ choose CONSTANT)
    Q_PROPERTY(QVariantMap transportOptions READ transportOptions CONSTANT)
    Q_PROPERTY(QString worldName READ worldName CONSTANT)
    Q_PROPERTY(QString key READ key CONSTANT)
    Q_PROPERTY(QString playerName READ playerName CONSTANT)
    Q_PROPERTY(bool scripted READ scripted CONSTANT)
    Q_PROPERTY(int attachDelay READ attachDelay CONSTANT)
    Q_PROPERTY(int timeoutMs READ timeoutMs CONSTANT)
    Q_PROPERTY(QString savePath READ savePath CONSTANT)
    Q_PROPERTY(QSize board READ board CONSTANT)
    // A board of one device: neither mmpirun nor --transport.
    Q_PROPERTY(bool alone READ alone CONSTANT)
    Q_PROPERTY(QString aloneAddress READ aloneAddress CONSTANT)

public:
    WhiteboardHost(WhiteboardOptions options, bool launched, QObject *parent = nullptr);

    QString transport() const { return m_options.transport; }
    bool discovered() const { return !m_options.transport.isEmpty(); }
    int size() const { return m_options.size; }
    bool host() const { return m_options.host || m_options.size == 1; }
    QString worldName() const { return m_options.worldName; }
    bool choose() const { return m_options.choose; }
    QVariantMap transportOptions() const { return m_options.transportOptions; }
    QString key() const { return m_options.key; }
    // --name, else "Device N" under mmpirun, else the machine's name.
    QString playerName() const;
    bool scripted() const { return m_options.scripted(); }
    int attachDelay() const { return m_options.attachDelayMs; }
    int timeoutMs() const { return m_options.timeoutSeconds * 1000; }
    QString savePath() const { return m_options.savePath; }
    QSize board() const { return m_options.board; }
    bool alone() const { return !m_launched && !discovered(); }
    QString aloneAddress() const;

    // {ok, steps, strokes, error}: this rank's script (--script, with {rank}
    // replaced) or its demo strokes.
    Q_INVOKABLE QVariantMap loadScript(int rank) const;
    Q_INVOKABLE QString outPath(int rank) const { return expand(m_options.outPath, rank); }
    Q_INVOKABLE QString screenshotPath(int rank) const { return expand(m_options.screenshotPath, rank); }
    Q_INVOKABLE QString expand(const QString &path, int rank) const;
    // Creates the folder of `path`; false if that fails.
    Q_INVOKABLE bool makeFolderFor(const QString &path) const;
    // QQuickWindow::grabWindow() into `path`; false if it cannot be written.
    Q_INVOKABLE bool grabWindow(QQuickWindow *window, const QString &path) const;
    // A finger (the mouse) on `window` at x, y in window coordinates:
    // scripted strokes go through the same input path as a hand's. `kind`:
    // 0 press, 1 move, 2 release. True if the window took it.
    Q_INVOKABLE bool touch(QQuickWindow *window, int kind, qreal x, qreal y) const;
    // A line on stdout (the test reads these).
    Q_INVOKABLE void report(const QString &line) const;
    // A message on stderr and the end of the process with `status`.
    Q_INVOKABLE void fail(const QString &message, int status = 1) const;
    Q_INVOKABLE void finish(int status = 0) const;

private:
    WhiteboardOptions m_options;
    bool m_launched;
};

} // namespace mmpi::whiteboard
