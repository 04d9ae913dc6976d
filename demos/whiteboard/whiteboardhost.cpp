#include "whiteboardhost.h"

#include "strokescript.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QMouseEvent>
#include <QQuickWindow>
#include <QSysInfo>
#include <QTimer>

#include <cstdio>

namespace mmpi::whiteboard {

WhiteboardHost::WhiteboardHost(WhiteboardOptions options, bool launched, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_launched(launched)
{
}

QString WhiteboardHost::aloneAddress() const
{
    // Each lone board is its own world: the pid keeps two apart.
    return QStringLiteral("local://mmpi-whiteboard-%1").arg(QCoreApplication::applicationPid());
}

QString WhiteboardHost::playerName() const
{
    if (!m_options.playerName.isEmpty())
        return m_options.playerName;
    if (m_launched)
        return QStringLiteral("Device %1").arg(qEnvironmentVariableIntValue("MMPI_RANK"));
    return QSysInfo::machineHostName().left(64);
}

QVariantMap WhiteboardHost::loadScript(int rank) const
{
    Result<StrokeScript> script = m_options.demoStrokes > 0
        ? Result<StrokeScript>(StrokeScript::demo(rank, m_options.demoStrokes, m_options.board))
        : StrokeScript::load(expand(m_options.scriptPath, rank), m_options.board);
    if (!script)
        return {{QStringLiteral("ok"), false}, {QStringLiteral("error"), script.error().message}};
    return {{QStringLiteral("ok"), true},
            {QStringLiteral("steps"), script->toVariantList()},
            {QStringLiteral("strokes"), script->strokeCount()}};
}

QString WhiteboardHost::expand(const QString &path, int rank) const
{
    QString expanded = path;
    return expanded.replace(QLatin1String("{rank}"), QString::number(rank));
}

bool WhiteboardHost::makeFolderFor(const QString &path) const
{
    return QDir().mkpath(QFileInfo(path).absolutePath());
}

bool WhiteboardHost::grabWindow(QQuickWindow *window, const QString &path) const
{
    if (!window || !makeFolderFor(path))
        return false;
    const QImage image = window->grabWindow();
    return !image.isNull() && image.save(path);
}

bool WhiteboardHost::touch(QQuickWindow *window, int kind, qreal x, qreal y) const
{
    enum Touch { Press, Move, Release };
    if (!window || kind < Press || kind > Release)
        return false;
    static const QEvent::Type types[] = {QEvent::MouseButtonPress, QEvent::MouseMove, QEvent::MouseButtonRelease};
    const QPointF pos(x, y);
    const Qt::MouseButton button = kind == Touch::Move ? Qt::NoButton : Qt::LeftButton;
    const Qt::MouseButtons held = kind == Touch::Release ? Qt::NoButton : Qt::LeftButton;
    QMouseEvent event(types[kind], pos, pos, window->mapToGlobal(pos), button, held, Qt::NoModifier);
    QCoreApplication::sendEvent(window, &event);
    return event.isAccepted();
}

void WhiteboardHost::report(const QString &line) const
{
    std::fprintf(stdout, "%s\n", qPrintable(line));
    std::fflush(stdout);
}

void WhiteboardHost::fail(const QString &message, int status) const
{
    std::fprintf(stderr, "mmpi-whiteboard: %s\n", qPrintable(message));
    std::fflush(stderr);
    finish(status);
}

void WhiteboardHost::finish(int status) const
{
    // Queued: QML may still be inside a handler of the object being torn down.
    QTimer::singleShot(0, qApp, [status] { QCoreApplication::exit(status); });
}

} // namespace mmpi::whiteboard
