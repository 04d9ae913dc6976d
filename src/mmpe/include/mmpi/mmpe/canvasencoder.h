// Turns drawing commands into compact big-endian batches, one per frame
// (docs/guide/mmpe.md). It remembers the state it has sent, so a pen used for a
// thousand lines travels once, and it refuses anything the decoder would refuse.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mmpe/canvasbatch.h>
#include <mmpi/mmpe/canvaslimits.h>

#include <QByteArray>

namespace mmpi {

class CanvasEncoder
{
public:
    explicit CanvasEncoder(CanvasLimits limits = {});

    // Adds a command to the current frame. A state change equal to the state
    // already sent adds nothing. EndFrame is refused: endFrame() closes frames.
    Result<void> append(const CanvasCommand &command);
    // Closes the current frame: the encoded batch, numbered frameNumber(),
    // after which the number goes up by one.
    QByteArray endFrame();
    // Encodes a whole batch (its own frame number; its last command must be
    // EndFrame), e.g. a scene's replay for a late joiner. Refused while
    // append() has commands pending for the current frame.
    Result<QByteArray> encode(const CanvasBatch &batch);

    // Puts pen, brush and font into the current frame even if unchanged: for a
    // receiver that did not see the earlier frames.
    // FrameTooLarge if the frame has no room left for them.
    Result<void> resendState();
    // Back to the default state, as a fresh receiver assumes.
    void resetState();
    // The receivers already have `state` (they hold a picture that ends in
    // it): state changes to it are left out, as if this encoder had sent them.
    void assumeState(const CanvasState &state);
    const CanvasState &sentState() const;

    quint32 frameNumber() const;
    void setFrameNumber(quint32 frame);

    // Images are deflated (qCompress) when that makes them smaller; on by default.
    void setImageCompression(bool enabled);
    bool imageCompression() const;

    // Commands and bytes in the frame being built (EndFrame and header not counted).
    quint32 pendingCommands() const;
    qsizetype pendingBytes() const;

private:
    void encodeCommand(const CanvasCommand &command);

    CanvasLimits m_limits;
    CanvasState m_sent;
    QByteArray m_body;
    quint32 m_count = 0;
    quint32 m_frame = 0;
    qint64 m_imageBytes = 0;
    bool m_compress = true;
};

} // namespace mmpi
