// The Mandelbrot set of the demo: a view of the complex plane and the pixels
// of a band of rows, the same on every node (plain doubles, no
// platform-dependent maths), so a picture assembled from many nodes' bands
// equals a one-node render pixel for pixel.
#pragma once

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
};

// Rows [firstRow, firstRow + rows) as RGB32 pixels, row after row.
QByteArray renderBand(const View &view, int firstRow, int rows);
// Copies a band made by renderBand() into `image`; `tint` (0 for none)
// mixes a colour in, to show which node computed it.
void placeBand(QImage &image, int firstRow, const QByteArray &pixels, QRgb tint);

} // namespace mmpi::demo
