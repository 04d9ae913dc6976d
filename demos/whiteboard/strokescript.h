// StrokeScript: the strokes a device draws by itself in scripted mode — read
// from a small text file (--script) or generated from the device's rank
// (--demo-strokes) — as steps the QML board plays like a finger would.
#pragma once

#include <mmpi/core/result.h>

#include <QColor>
#include <QList>
#include <QPoint>
#include <QSize>
#include <QString>
#include <QVariantList>

namespace mmpi::whiteboard {

class StrokeScript
{
public:
    enum class Kind { Pen, Stroke, Clear };
    struct Step
    {
        Kind kind = Kind::Stroke;
        QColor color;        // Pen, Clear; invalid for Pen: the device's own colour
        int width = 0;       // Pen
        QList<QPoint> points; // Stroke: one point is a dot
    };

    // Limits that keep a hostile or mistaken file from using unbounded memory.
    static constexpr qint64 MaxFileBytes = 1024 * 1024;
    static constexpr int MaxSteps = 20000;
    static constexpr int MaxPointsPerStroke = 4096;
    static constexpr int MaxPenWidth = 200;
    static constexpr int MaxDemoStrokes = 1000;

    // The text format, one step a line ('#' and a space, or '#' first on
    // the line, starts a comment):
    //   pen COLOR|mine WIDTH     clear [COLOR]     stroke X,Y [X,Y ...]
    // Coordinates are in the board's logical space. Errors name the line.
    static Result<StrokeScript> parse(const QString &text, QSize board);
    static Result<StrokeScript> load(const QString &path, QSize board);
    // `count` strokes that depend only on `rank`: waves spread over the
    // board so that the devices' strokes cross each other.
    static StrokeScript demo(int rank, int count, QSize board);

    const QList<Step> &steps() const { return m_steps; }
    int strokeCount() const;
    // For QML: [{kind: "pen"|"stroke"|"clear", color, width, points: [[x, y], ...]}].
    QVariantList toVariantList() const;

private:
    QList<Step> m_steps;
};

} // namespace mmpi::whiteboard
