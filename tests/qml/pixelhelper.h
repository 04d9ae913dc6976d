// Test helper for the QML tests (context property `pixels`): grabs what a
// ParallelCanvas item shows and compares it to the same scene drawn with
// plain QPainter; measures how many frames per second the item shows.
#pragma once

#include <QImage>
#include <QObject>
#include <QVariantMap>

class QQuickItem;

class PixelHelper : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // The named scene ("basic", or "basicPlus": basic, then a frame on top) drawn with QPainter, logical size 320x240,
    // scaled to `size` as the MMPE renderer scales.
    static QImage reference(const QString &scene, QSize size);
    // {ok, message, differing, maxDifference}: `actual` against the
    // reference; anti-aliased edges may differ by a few levels.
    static QVariantMap compare(const QImage &actual, const QImage &expected);

    // The item as the window shows it, against the reference.
    Q_INVOKABLE QVariantMap compareItem(QQuickItem *item, const QString &scene);
    // An image file (saveImage) against the reference at its size.
    Q_INVOKABLE QVariantMap compareFile(const QString &path, const QString &scene);
    Q_INVOKABLE QString tempPath(const QString &name) const;
    // Draws `frames` frames of `primitives` each (a clear, then lines,
    // rects and ellipses that move) into a ParallelCanvas item and waits for
    // each to be on screen: {frames, allShown, seconds, fps}.
    Q_INVOKABLE QVariantMap measureFrameRate(QQuickItem *canvas, int frames, int primitives);
};
