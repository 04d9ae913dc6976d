// The bounds every MMPE batch must respect. The encoder refuses to produce what
// the decoder would refuse, and the decoder checks each declared length against
// these before it allocates, so a hostile peer cannot make a node allocate more
// than maxImageBytesPerBatch plus the size of the bytes it actually sent.
#pragma once

#include <QtGlobal>

namespace mmpi {

struct CanvasLimits
{
    qint64 maxBatchBytes = 64LL * 1024 * 1024;       // an encoded batch
    quint32 maxCommands = 65536;                     // per batch, EndFrame included
    quint16 maxPoints = 16384;                       // per Polyline/Polygon
    quint16 maxTextBytes = 4096;                     // UTF-8 bytes per Text
    quint8 maxFamilyBytes = 255;                     // UTF-8 bytes of a font family
    quint16 maxPenWidth = 1024;
    quint16 maxPointSize = 1024;
    int maxImageSide = 8192;                         // width and height of an Image
    qint64 maxImageBytes = 64LL * 1024 * 1024;       // decoded, 4 bytes per pixel
    qint64 maxImageBytesPerBatch = 128LL * 1024 * 1024;
};

} // namespace mmpi
