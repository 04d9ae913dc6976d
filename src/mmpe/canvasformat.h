// What the MMPE encoder and decoder must agree on: the batch header's constants,
// the image flag bits, and the one validation both run on every command, so
// the encoder can never emit a batch the decoder refuses.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mmpe/canvascommand.h>
#include <mmpi/mmpe/canvaslimits.h>

namespace mmpi::canvasformat {

constexpr quint32 Magic = 0x4D4D5045; // "MMPE"
constexpr quint8 Version = 1;
constexpr int HeaderSize = 14;        // magic, version, flags, frame, count

enum ImageFlag : quint8 {
    Compressed = 0x01, // data is qCompress output: u32 BE raw size + zlib stream
    Opaque = 0x02,     // 3 bytes (R, G, B) per pixel instead of 4 (A, R, G, B)
};
constexpr quint8 ImageFlagsMask = Compressed | Opaque;

bool isKnownOpcode(quint8 code);
int bytesPerPixel(bool opaque);

// Checks value ranges and sizes of one command against the limits. EndFrame
// passes; where it may stand is the caller's business.
Result<void> validate(const CanvasCommand &command, const CanvasLimits &limits);

} // namespace mmpi::canvasformat
