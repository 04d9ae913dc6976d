#include "strokescript.h"

#include <QFile>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <cmath>

namespace mmpi::whiteboard {

namespace {

Error lineError(int line, const QString &what)
{
    return Error(ErrorCode::BadConfiguration, QStringLiteral("script line %1: %2").arg(line).arg(what));
}

Result<QColor> parseColor(const QString &text, int line)
{
    const QColor color = QColor::fromString(text);
    if (!color.isValid())
        return lineError(line, QStringLiteral("'%1' is not a colour (try #rrggbb or a name like red)").arg(text));
    return color;
}

Result<QPoint> parsePoint(const QString &text, int line, QSize board)
{
    const auto parts = text.split(QLatin1Char(','));
    bool okX = false, okY = false;
    const int x = parts.size() == 2 ? parts[0].toInt(&okX) : 0;
    const int y = parts.size() == 2 ? parts[1].toInt(&okY) : 0;
    if (!okX || !okY)
        return lineError(line, QStringLiteral("'%1' is not a point X,Y").arg(text));
    if (x < 0 || y < 0 || x >= board.width() || y >= board.height())
        return lineError(line, QStringLiteral("point %1,%2 is outside the %3x%4 board")
                                   .arg(x).arg(y).arg(board.width()).arg(board.height()));
    return QPoint(x, y);
}

Result<StrokeScript::Step> parsePen(const QStringList &words, int line)
{
    if (words.size() != 3)
        return lineError(line, QStringLiteral("pen takes a colour (or 'mine') and a width"));
    StrokeScript::Step step{StrokeScript::Kind::Pen, {}, 0, {}};
    if (words[1] != QLatin1String("mine")) {
        auto color = parseColor(words[1], line);
        if (!color)
            return color.error();
        step.color = *color;
    }
    bool ok = false;
    step.width = words[2].toInt(&ok);
    if (!ok || step.width < 1 || step.width > StrokeScript::MaxPenWidth)
        return lineError(line, QStringLiteral("pen width '%1' is not a whole number from 1 to %2")
                                   .arg(words[2]).arg(StrokeScript::MaxPenWidth));
    return step;
}

Result<StrokeScript::Step> parseStroke(const QStringList &words, int line, QSize board)
{
    if (words.size() < 2)
        return lineError(line, QStringLiteral("stroke needs at least one point X,Y"));
    if (words.size() - 1 > StrokeScript::MaxPointsPerStroke)
        return lineError(line, QStringLiteral("a stroke has at most %1 points").arg(StrokeScript::MaxPointsPerStroke));
    StrokeScript::Step step{StrokeScript::Kind::Stroke, {}, 0, {}};
    for (qsizetype i = 1; i < words.size(); ++i) {
        auto point = parsePoint(words[i], line, board);
        if (!point)
            return point.error();
        step.points.append(*point);
    }
    return step;
}

Result<StrokeScript::Step> parseClear(const QStringList &words, int line)
{
    if (words.size() > 2)
        return lineError(line, QStringLiteral("clear takes at most a colour"));
    StrokeScript::Step step{StrokeScript::Kind::Clear, QColor(Qt::white), 0, {}};
    if (words.size() == 2) {
        auto color = parseColor(words[1], line);
        if (!color)
            return color.error();
        step.color = *color;
    }
    return step;
}

Result<StrokeScript::Step> parseLine(const QStringList &words, int line, QSize board)
{
    const QString &verb = words.first();
    if (verb == QLatin1String("pen"))
        return parsePen(words, line);
    if (verb == QLatin1String("stroke"))
        return parseStroke(words, line, board);
    if (verb == QLatin1String("clear"))
        return parseClear(words, line);
    return lineError(line, QStringLiteral("unknown step '%1' (pen, stroke or clear)").arg(verb));
}

} // namespace

Result<StrokeScript> StrokeScript::parse(const QString &text, QSize board)
{
    static const QRegularExpression spaces(QStringLiteral("\\s+"));
    // '#' also starts colours: a comment is a line starting with '#', or a
    // '#' standing alone as a word and what follows.
    static const QRegularExpression comment(QStringLiteral("^\\s*#.*$|\\s#(\\s.*)?$"));
    StrokeScript script;
    const auto lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString content = QString(lines[i]).remove(comment).trimmed();
        if (content.isEmpty())
            continue;
        if (script.m_steps.size() >= MaxSteps)
            return lineError(int(i + 1), QStringLiteral("a script has at most %1 steps").arg(MaxSteps));
        auto step = parseLine(content.split(spaces), int(i + 1), board);
        if (!step)
            return step.error();
        script.m_steps.append(*step);
    }
    if (script.strokeCount() == 0)
        return Error(ErrorCode::BadConfiguration, QStringLiteral("the script draws no stroke"));
    return script;
}

Result<StrokeScript> StrokeScript::load(const QString &path, QSize board)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error(ErrorCode::BadConfiguration, QStringLiteral("cannot read the script '%1': %2").arg(path, file.errorString()));
    if (file.size() > MaxFileBytes)
        return Error(ErrorCode::BadConfiguration,
                     QStringLiteral("the script '%1' is larger than %2 bytes").arg(path).arg(MaxFileBytes));
    const QByteArray bytes = file.read(MaxFileBytes + 1);
    auto script = parse(QString::fromUtf8(bytes), board);
    if (!script)
        return Error(script.error().code, path + QStringLiteral(": ") + script.error().message);
    return script;
}

StrokeScript StrokeScript::demo(int rank, int count, QSize board)
{
    // Seeded by the rank only, so a rerun draws the same strokes; a fixed
    // pseudo-random sequence and not std::rand, whose output is not portable.
    QRandomGenerator random(quint32(0x5eed0000u + quint32(rank)));
    StrokeScript script;
    script.m_steps.append({Kind::Pen, {}, 8, {}});
    const int w = board.width(), h = board.height();
    for (int i = 0; i < count; ++i) {
        Step stroke{Kind::Stroke, {}, 0, {}};
        const double y0 = h * (0.12 + 0.76 * random.bounded(1.0));
        const double x0 = w * 0.05 + w * 0.3 * random.bounded(1.0);
        const double length = w * (0.35 + 0.25 * random.bounded(1.0));
        const double amplitude = h * (0.04 + 0.08 * random.bounded(1.0));
        const double phase = 6.283 * random.bounded(1.0);
        const double slope = (random.bounded(1.0) - 0.5) * 0.4;
        const int points = 40;
        for (int p = 0; p < points; ++p) {
            const double t = double(p) / (points - 1);
            const double x = x0 + length * t;
            const double y = y0 + slope * length * t + amplitude * std::sin(phase + t * 9.0);
            stroke.points.append(QPoint(qBound(0, int(std::lround(x)), w - 1), qBound(0, int(std::lround(y)), h - 1)));
        }
        script.m_steps.append(stroke);
    }
    return script;
}

int StrokeScript::strokeCount() const
{
    return int(std::count_if(m_steps.cbegin(), m_steps.cend(), [](const Step &s) { return s.kind == Kind::Stroke; }));
}

QVariantList StrokeScript::toVariantList() const
{
    static const char *kinds[] = {"pen", "stroke", "clear"};
    QVariantList list;
    for (const Step &step : m_steps) {
        QVariantList points;
        for (const QPoint &p : step.points)
            points.append(QVariant(QVariantList{p.x(), p.y()}));
        list.append(QVariantMap{{QStringLiteral("kind"), QString::fromLatin1(kinds[int(step.kind)])},
                                {QStringLiteral("color"), step.color.isValid() ? step.color.name() : QString()},
                                {QStringLiteral("width"), step.width},
                                {QStringLiteral("points"), points}});
    }
    return list;
}

} // namespace mmpi::whiteboard
