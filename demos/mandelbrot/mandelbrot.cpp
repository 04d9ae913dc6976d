#include "mandelbrot.h"

#include <cmath>
#include <cstring>

namespace mmpi::demo {

namespace {

QRgb colourFor(int iterations, int maxIterations)
{
    if (iterations >= maxIterations)
        return qRgb(0, 0, 0);
    // A cheap palette that cycles: smooth enough to see the bands' seams if
    // any node computed differently.
    const double t = double(iterations) / 64.0;
    const auto channel = [t](double phase) { return int(127.5 + 127.5 * std::sin(6.283185307179586 * (t + phase))); };
    return qRgb(channel(0.0), channel(0.33), channel(0.67));
}

} // namespace

QByteArray renderBand(const View &view, int firstRow, int rows)
{
    QByteArray pixels(qsizetype(view.width) * rows * 4, Qt::Uninitialized);
    auto *out = reinterpret_cast<QRgb *>(pixels.data());
    const double step = view.spanX / view.width;
    const double top = view.centerY + step * view.height / 2;
    const double left = view.centerX - view.spanX / 2;
    for (int r = 0; r < rows; ++r) {
        const double ci = top - step * (firstRow + r);
        for (int x = 0; x < view.width; ++x) {
            const double cr = left + step * x;
            double zr = 0, zi = 0;
            int n = 0;
            while (n < view.maxIterations && zr * zr + zi * zi <= 4.0) {
                const double next = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = next;
                ++n;
            }
            *out++ = colourFor(n, view.maxIterations);
        }
    }
    return pixels;
}

void placeBand(QImage &image, int firstRow, const QByteArray &pixels, QRgb tint)
{
    const int width = image.width();
    const int rows = int(pixels.size() / (qsizetype(width) * 4));
    const auto *in = reinterpret_cast<const QRgb *>(pixels.constData());
    for (int r = 0; r < rows && firstRow + r < image.height(); ++r) {
        auto *line = reinterpret_cast<QRgb *>(image.scanLine(firstRow + r));
        std::memcpy(line, in + qsizetype(r) * width, size_t(width) * 4);
        if (tint == 0)
            continue;
        for (int x = 0; x < width; ++x)
            line[x] = qRgb((qRed(line[x]) * 3 + qRed(tint)) / 4, (qGreen(line[x]) * 3 + qGreen(tint)) / 4,
                           (qBlue(line[x]) * 3 + qBlue(tint)) / 4);
    }
}

} // namespace mmpi::demo
