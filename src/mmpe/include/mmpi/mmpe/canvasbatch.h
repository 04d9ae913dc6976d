// A batch: the commands of one frame, as the encoder emits and the decoder
// returns them. It always ends with exactly one EndFrame, which is how a
// receiver knows the picture is complete and may be shown.
#pragma once

#include <mmpi/mmpe/canvascommand.h>

namespace mmpi {

struct CanvasBatch
{
    quint32 frame = 0; // frame number, increasing along a stream
    QList<CanvasCommand> commands;

    bool operator==(const CanvasBatch &) const = default;
};

} // namespace mmpi
