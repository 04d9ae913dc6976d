// WhiteboardOptions: the command line of mmpi-whiteboard — how the device
// finds its world (mmpirun's environment, or discovery over a transport) and
// whether it draws by hand or plays a script headless and saves the board.
#pragma once

#include <mmpi/core/result.h>

#include <QSize>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace mmpi::whiteboard {

struct WhiteboardOptions
{
    // Empty: mmpirun's environment if launched, else a board of one device.
    QString transport;
    int size = 1;
    bool host = false; // discovery: this device is the root
    // Discovery: list the worlds announced nearby and join the one picked
    // (the first one listed, headless) instead of --world-name's.
    bool choose = false;
    QVariantMap transportOptions; // --transport-options, a JSON object
    QString worldName = QStringLiteral("whiteboard");
    QString key = QStringLiteral("mmpi-whiteboard");
    QString playerName;

    // Scripted (headless) mode: one of these, and outPath.
    QString scriptPath;
    int demoStrokes = 0;
    QString outPath;        // may contain {rank}
    QString screenshotPath; // may contain {rank}
    int attachDelayMs = 0;  // devices other than the root open the board late
    int timeoutSeconds = 120;

    QString savePath; // interactive: the Save PNG field's first value
    QSize board{1280, 800};

    bool scripted() const { return !scriptPath.isEmpty() || demoStrokes > 0; }

    // `arguments` as QCoreApplication::arguments() (program name first).
    // Errors name the option; --help and --version are the caller's.
    static Result<WhiteboardOptions> parse(const QStringList &arguments);
    static QString helpText();
    static QString defaultSavePath();
};

} // namespace mmpi::whiteboard
