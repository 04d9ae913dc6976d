#include "whiteboardoptions.h"

#include "strokescript.h"

#include <QCommandLineParser>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

namespace mmpi::whiteboard {

namespace {

const QList<QCommandLineOption> &optionList()
{
    static const QList<QCommandLineOption> options = {
        {QStringLiteral("transport"), QStringLiteral("Form the world by discovery over NAME (local, tcp, sim, bluetooth) "
                                                     "instead of mmpirun's environment."), QStringLiteral("NAME")},
        {QStringLiteral("size"), QStringLiteral("Discovery: the number of devices to wait for."), QStringLiteral("N")},
        {QStringLiteral("host"), QStringLiteral("Discovery: this device is the root that finds the others.")},
        {QStringLiteral("world-name"), QStringLiteral("Discovery: the world's name."), QStringLiteral("NAME")},
        {QStringLiteral("choose"), QStringLiteral("Discovery: list the worlds nearby and join the one picked "
                                                  "(headless: the first one listed).")},
        {QStringLiteral("transport-options"), QStringLiteral("Discovery: the transport's options, a JSON object."),
         QStringLiteral("JSON")},
        {QStringLiteral("key"), QStringLiteral("Discovery: the shared secret of the world."), QStringLiteral("TEXT")},
        {QStringLiteral("name"), QStringLiteral("This device's name in the player list."), QStringLiteral("NAME")},
        {QStringLiteral("script"), QStringLiteral("Headless: draw the strokes of FILE ({rank} is replaced), "
                                                  "then save the board and exit."), QStringLiteral("FILE")},
        {QStringLiteral("demo-strokes"), QStringLiteral("Headless: draw N strokes that depend on the rank, "
                                                        "then save the board and exit."), QStringLiteral("N")},
        {QStringLiteral("out"), QStringLiteral("Headless: where to save the board ({rank} is replaced)."), QStringLiteral("PNG")},
        {QStringLiteral("screenshot"), QStringLiteral("Headless: also save a picture of the window."), QStringLiteral("PNG")},
        {QStringLiteral("attach-delay"), QStringLiteral("Headless: devices other than the root open the board MS "
                                                        "after the world forms (shows the replay)."), QStringLiteral("MS")},
        {QStringLiteral("timeout"), QStringLiteral("Headless: give up after S seconds (default 120)."), QStringLiteral("S")},
        {QStringLiteral("save-path"), QStringLiteral("The Save PNG field's starting value."), QStringLiteral("PNG")},
    };
    return options;
}

Result<int> intOption(const QCommandLineParser &parser, const QString &name, int lowest, int highest, int fallback)
{
    if (!parser.isSet(name))
        return fallback;
    bool ok = false;
    const int value = parser.value(name).toInt(&ok);
    if (!ok || value < lowest || value > highest)
        return Error(ErrorCode::BadConfiguration, QStringLiteral("--%1 takes a whole number from %2 to %3, not '%4'")
                                                       .arg(name).arg(lowest).arg(highest).arg(parser.value(name)));
    return value;
}

Result<void> checkCombination(const WhiteboardOptions &o)
{
    auto refuse = [](const QString &text) { return Error(ErrorCode::BadConfiguration, text); };
    if (!o.scriptPath.isEmpty() && o.demoStrokes > 0)
        return refuse(QStringLiteral("--script and --demo-strokes exclude each other"));
    if (o.scripted() && o.outPath.isEmpty())
        return refuse(QStringLiteral("headless mode needs --out PNG"));
    if (!o.scripted() && (!o.outPath.isEmpty() || !o.screenshotPath.isEmpty() || o.attachDelayMs > 0))
        return refuse(QStringLiteral("--out, --screenshot and --attach-delay need --script or --demo-strokes"));
    if (o.transport.isEmpty() && (o.size != 1 || o.host || o.choose || !o.transportOptions.isEmpty()))
        return refuse(QStringLiteral("--size, --host, --choose and --transport-options are for discovery: add "
                                     "--transport NAME"));
    if (o.choose && o.host)
        return refuse(QStringLiteral("--choose is for a device that joins a world, not its --host"));
    return success();
}

} // namespace

Result<WhiteboardOptions> WhiteboardOptions::parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.addOptions(optionList());
    if (!parser.parse(arguments))
        return Error(ErrorCode::BadConfiguration, parser.errorText());
    if (!parser.positionalArguments().isEmpty())
        return Error(ErrorCode::BadConfiguration,
                     QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));
    WhiteboardOptions o;
    o.transport = parser.value(QStringLiteral("transport"));
    o.host = parser.isSet(QStringLiteral("host"));
    o.choose = parser.isSet(QStringLiteral("choose"));
    if (parser.isSet(QStringLiteral("transport-options"))) {
        const QJsonDocument json = QJsonDocument::fromJson(parser.value(QStringLiteral("transport-options")).toUtf8());
        if (!json.isObject())
            return Error(ErrorCode::BadConfiguration, QStringLiteral("--transport-options takes a JSON object"));
        o.transportOptions = json.object().toVariantMap();
    }
    if (parser.isSet(QStringLiteral("world-name")))
        o.worldName = parser.value(QStringLiteral("world-name"));
    if (parser.isSet(QStringLiteral("key")))
        o.key = parser.value(QStringLiteral("key"));
    o.playerName = parser.value(QStringLiteral("name")).left(64);
    o.scriptPath = parser.value(QStringLiteral("script"));
    o.outPath = parser.value(QStringLiteral("out"));
    o.screenshotPath = parser.value(QStringLiteral("screenshot"));
    o.savePath = parser.isSet(QStringLiteral("save-path")) ? parser.value(QStringLiteral("save-path")) : defaultSavePath();
    const auto size = intOption(parser, QStringLiteral("size"), 1, 256, 1);
    const auto strokes = intOption(parser, QStringLiteral("demo-strokes"), 1, StrokeScript::MaxDemoStrokes, 0);
    const auto delay = intOption(parser, QStringLiteral("attach-delay"), 0, 600000, 0);
    const auto timeout = intOption(parser, QStringLiteral("timeout"), 1, 86400, 120);
    for (const Result<int> *r : {&size, &strokes, &delay, &timeout})
        if (!*r)
            return r->error();
    o.size = *size;
    o.demoStrokes = *strokes;
    o.attachDelayMs = *delay;
    o.timeoutSeconds = *timeout;
    if (auto checked = checkCombination(o); !checked)
        return checked.error();
    return o;
}

QString WhiteboardOptions::helpText()
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "A whiteboard shared by every device of an MMPI world.\n"
        "  mmpirun -n 3 mmpi-whiteboard                       three windows, one world\n"
        "  mmpi-whiteboard --transport tcp --size 3 --host    the root; the others without --host\n"
        "  mmpirun -n 3 mmpi-whiteboard --platform offscreen --demo-strokes 5 --out board-{rank}.png"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions(optionList());
    return parser.helpText();
}

QString WhiteboardOptions::defaultSavePath()
{
    for (auto location : {QStandardPaths::PicturesLocation, QStandardPaths::DocumentsLocation, QStandardPaths::HomeLocation}) {
        const QString dir = QStandardPaths::writableLocation(location);
        if (!dir.isEmpty())
            return QDir(dir).filePath(QStringLiteral("whiteboard.png"));
    }
    return QStringLiteral("whiteboard.png");
}

} // namespace mmpi::whiteboard
