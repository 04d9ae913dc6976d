// The Mandelbrot set of the demo: a view of the complex plane and the pixels
// of a band of rows, the same on every node (plain doubles, no
// platform-dependent maths), so a picture assembled from many nodes' bands
// equals a one-node render pixel for pixel.
#pragma once

#include <mmpi/core/result.h>

#include <QByteArray>
#include <QImage>

namespace mmpi::demo {

struct View
{
    int width = 800;
    int height = 600;
    double centerX = -0.5;
    double centerY = 0.0;
    double spanX = 3.0; // width of the view in the complex plane
    int maxIterations = 500;

    bool operator==(const View &) const = default;
};

// Rows [firstRow, firstRow + rows) as RGB32 pixels, row after row.
QByteArray renderBand(const View &view, int firstRow, int rows);
// Copies a band made by renderBand() into `image`; `tint` (0 for none)
// mixes a colour in, to show which node computed it.
void placeBand(QImage &image, int firstRow, const QByteArray &pixels, QRgb tint);

// Bands of `bandRows` rows: how many, and the rows of one (the last may be short).
int bandCount(const View &view, int bandRows);
int rowsOf(const View &view, int bandRows, int band);
// A band's work-pool result: the nanoseconds it took (big-endian i64, for
// the summary's bands in flight), then its pixels.
QByteArray timedBand(const View &view, int bandRows, int band);
// The colour a node's bands are tinted with.
QRgb tintOf(int node);

// Views travel between devices (a zoom on any device goes to the root):
// fixed-size big-endian bytes. decodeView() refuses what validateView()
// refuses, so a bad peer cannot make a node allocate a huge picture.
QByteArray encodeView(const View &view);
Result<View> decodeView(QByteArrayView bytes);
// Sizes 1..16384, iterations 1..1000000, a finite centre within |4|, a
// finite span from 1e-13 (where doubles run out of digits) to 16.
Result<void> validateView(const View &view);

} // namespace mmpi::demo
