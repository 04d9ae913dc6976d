// libFuzzer target for MMPE's batch decoder: arbitrary bytes must never crash
// it, hang it or make it allocate beyond its limits (run.sh sets a malloc
// limit), and every batch it accepts must be well-formed: valid commands,
// one EndFrame at the end, encodable again to a batch that decodes to the
// same commands, no strict prefix of it accepted, and usable by the scene
// and the viewport filter.
//
// Input layout: the whole input is one batch (the seeds are encoder output).
#include "invariant.h"

#include <mmpi/mmpe/canvasdecoder.h>
#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasscene.h>
#include <mmpi/mmpe/canvasviewport.h>

#include "canvasformat.h" // src/mmpe: the validation encoder and decoder share

#include <QLoggingCategory>

#include <cstdint>

using namespace mmpi;
using mmpi::fuzz::check;

namespace {

// Smaller than the defaults, so that a fuzzed image costs microseconds, not
// seconds; the checks are the same code whatever the numbers.
CanvasLimits fuzzLimits()
{
    CanvasLimits limits;
    limits.maxBatchBytes = 4 * 1024 * 1024;
    limits.maxImageSide = 1024;
    limits.maxImageBytes = 1024 * 1024;
    limits.maxImageBytesPerBatch = 2 * 1024 * 1024;
    return limits;
}

const CanvasLimits Limits = fuzzLimits();

// The commands an encoder emits for these: state changes equal to the state
// in effect are dropped (both ends start from the defaults).
QList<CanvasCommand> withoutRedundantState(const QList<CanvasCommand> &commands)
{
    QList<CanvasCommand> out;
    CanvasState state;
    for (const CanvasCommand &c : commands) {
        if (c.opcode == CanvasOpcode::SetPen) {
            if (c.pen == state.pen)
                continue;
            state.pen = c.pen;
        } else if (c.opcode == CanvasOpcode::SetBrush) {
            if (c.brush == state.brush)
                continue;
            state.brush = c.brush;
        } else if (c.opcode == CanvasOpcode::SetFont) {
            if (c.font == state.font)
                continue;
            state.font = c.font;
        }
        out.append(c);
    }
    return out;
}

void checkShape(const CanvasBatch &batch, QByteArrayView input)
{
    check(!batch.commands.isEmpty(), "accepted batch without commands");
    check(quint32(batch.commands.size()) <= Limits.maxCommands, "more commands than the limit");
    qint64 imageBytes = 0;
    const bool inputHasReplacement = input.contains(QByteArrayView("\xEF\xBF\xBD"));
    for (qsizetype i = 0; i < batch.commands.size(); ++i) {
        const CanvasCommand &c = batch.commands[i];
        check((c.opcode == CanvasOpcode::EndFrame) == (i + 1 == batch.commands.size()), "EndFrame misplaced");
        check(canvasformat::validate(c, Limits).hasValue(), "accepted command fails validation");
        if (c.opcode == CanvasOpcode::Image)
            imageBytes += qint64(c.image.width()) * c.image.height() * 4;
        // Invalid UTF-8 is refused, never replaced by U+FFFD.
        if (!inputHasReplacement)
            check(!c.text.contains(QChar::ReplacementCharacter) && !c.font.family.contains(QChar::ReplacementCharacter),
                  "invalid UTF-8 decoded with replacement characters");
    }
    check(imageBytes <= Limits.maxImageBytesPerBatch, "more image bytes than the limit");
}

void checkRoundTrip(const CanvasDecoder &decoder, const CanvasBatch &batch)
{
    CanvasEncoder encoder(Limits);
    const auto again = encoder.encode(batch);
    check(again.hasValue(), "the encoder refuses a batch the decoder accepted");
    const auto decoded = decoder.decode(*again);
    check(decoded.hasValue(), "re-encoded batch does not decode");
    check(decoded->frame == batch.frame, "frame number changed");
    check(decoded->commands == withoutRedundantState(batch.commands), "re-encoded batch decodes differently");
}

// All or nothing: a batch cut anywhere is refused.
void checkPrefixes(const CanvasDecoder &decoder, QByteArrayView input)
{
    check(!decoder.decode(input.first(input.size() - 1)), "a batch without its last byte is accepted");
    check(!decoder.decode(input.first(input.size() / 2)), "half a batch is accepted");
}

// The scene takes it, and a viewport keeps every state change and clear
// and ends with the batch's state.
void checkScene(const CanvasBatch &batch)
{
    CanvasScene scene;
    check(scene.appendBatch(batch).hasValue(), "the scene refuses an accepted batch");
    const CanvasState end = scene.state();
    CanvasState state;
    const CanvasViewport viewport(QRect(100, 50, 200, 100));
    const auto cut = viewport.filter(batch.commands, state);
    check(state == end, "the viewport filter ends in another state");
    check(cut.size() <= batch.commands.size(), "the viewport filter adds commands");
    CanvasState replayed;
    for (const CanvasCommand &c : cut) {
        if (c.opcode == CanvasOpcode::SetPen)
            replayed.pen = c.pen;
        else if (c.opcode == CanvasOpcode::SetBrush)
            replayed.brush = c.brush;
        else if (c.opcode == CanvasOpcode::SetFont)
            replayed.font = c.font;
    }
    check(replayed == end, "the cut commands leave the receiver in another state");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // Refusals are logged at debug level and corrupt zlib data makes
    // qUncompress warn: neither is news here, and both are slow.
    QLoggingCategory::setFilterRules(QStringLiteral("mmpi.mmpe.debug=false\nqt.*=false"));
    qInstallMessageHandler([](QtMsgType, const QMessageLogContext &, const QString &) {});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    const CanvasDecoder decoder(Limits);
    const auto batch = decoder.decode(input);
    if (!batch) {
        check(batch.error().isError(), "refusal without an error code");
        check(!batch.error().message.isEmpty(), "refusal without a message");
        return 0;
    }
    checkShape(*batch, input);
    checkRoundTrip(decoder, *batch);
    checkPrefixes(decoder, input);
    checkScene(*batch);
    return 0;
}
