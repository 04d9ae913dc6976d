#include "mandelbrot.h"

#include <QElapsedTimer>
#include <QtEndian>

#include <algorithm>
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

namespace mmpi::demo {

int bandCount(const View &view, int bandRows) { return (view.height + bandRows - 1) / bandRows; }

int rowsOf(const View &view, int bandRows, int band) { return std::min(bandRows, view.height - band * bandRows); }

QByteArray timedBand(const View &view, int bandRows, int band)
{
    QElapsedTimer clock;
    clock.start();
    const QByteArray pixels = renderBand(view, band * bandRows, rowsOf(view, bandRows, band));
    QByteArray result(8, Qt::Uninitialized);
    qToBigEndian<qint64>(clock.nsecsElapsed(), result.data());
    return result + pixels;
}

QRgb tintOf(int node)
{
    static const QRgb colours[] = {qRgb(230, 60, 60), qRgb(60, 200, 80), qRgb(60, 110, 240), qRgb(240, 200, 40),
                                   qRgb(200, 60, 220), qRgb(40, 210, 210), qRgb(250, 140, 30), qRgb(150, 150, 150)};
    return colours[node % 8];
}

namespace {

constexpr qsizetype ViewBytes = 4 + 4 + 8 + 8 + 8 + 4;

void putDouble(char *at, double value)
{
    quint64 bits;
    std::memcpy(&bits, &value, 8);
    qToBigEndian<quint64>(bits, at);
}

double getDouble(const char *at)
{
    const quint64 bits = qFromBigEndian<quint64>(at);
    double value;
    std::memcpy(&value, &bits, 8);
    return value;
}

} // namespace

QByteArray encodeView(const View &view)
{
    QByteArray bytes(ViewBytes, Qt::Uninitialized);
    char *at = bytes.data();
    qToBigEndian<qint32>(view.width, at);
    qToBigEndian<qint32>(view.height, at + 4);
    putDouble(at + 8, view.centerX);
    putDouble(at + 16, view.centerY);
    putDouble(at + 24, view.spanX);
    qToBigEndian<qint32>(view.maxIterations, at + 32);
    return bytes;
}

Result<View> decodeView(QByteArrayView bytes)
{
    if (bytes.size() != ViewBytes)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("a view is %1 bytes, not %2").arg(ViewBytes).arg(bytes.size()));
    const char *at = bytes.data();
    View view;
    view.width = qFromBigEndian<qint32>(at);
    view.height = qFromBigEndian<qint32>(at + 4);
    view.centerX = getDouble(at + 8);
    view.centerY = getDouble(at + 16);
    view.spanX = getDouble(at + 24);
    view.maxIterations = qFromBigEndian<qint32>(at + 32);
    if (auto valid = validateView(view); !valid)
        return valid.error();
    return view;
}

Result<void> validateView(const View &view)
{
    const auto refuse = [](const QString &why) { return Error(ErrorCode::BadConfiguration, why); };
    if (view.width < 1 || view.width > 16384 || view.height < 1 || view.height > 16384)
        return refuse(QStringLiteral("width and height must be 1..16384, not %1x%2").arg(view.width).arg(view.height));
    if (view.maxIterations < 1 || view.maxIterations > 1000000)
        return refuse(QStringLiteral("iterations must be 1..1000000, not %1").arg(view.maxIterations));
    if (!std::isfinite(view.centerX) || !std::isfinite(view.centerY) || std::abs(view.centerX) > 4
        || std::abs(view.centerY) > 4)
        return refuse(QStringLiteral("the centre must be finite and within 4 of 0"));
    if (!std::isfinite(view.spanX) || view.spanX < 1e-13 || view.spanX > 16)
        return refuse(QStringLiteral("the span must be between 1e-13 and 16, not %1").arg(view.spanX));
    return {};
}

} // namespace mmpi::demo
