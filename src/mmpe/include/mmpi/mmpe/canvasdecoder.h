// Turns one received MMPE batch back into commands, trusting nothing: every
// length is bounded before anything is allocated, every value range-checked,
// and the first problem refuses the whole batch with where and what it was.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mmpe/canvasbatch.h>
#include <mmpi/mmpe/canvaslimits.h>

#include <QByteArrayView>

namespace mmpi {

class CanvasDecoder
{
public:
    explicit CanvasDecoder(CanvasLimits limits = {});

    // The batch, or BadMagic / BadVersion / BadHeader (reserved bits, bad
    // values), TruncatedPayload (input ends inside something), CountMismatch
    // (declared counts or lengths that do not fit), FrameTooLarge (a limit),
    // ProtocolViolation (unknown opcode, misplaced EndFrame, bad image data).
    // A batch is all or nothing: any strict prefix of a valid batch is refused.
    Result<CanvasBatch> decode(QByteArrayView bytes) const;

    const CanvasLimits &limits() const;

private:
    CanvasLimits m_limits;
};

} // namespace mmpi
