// libFuzzer target for sealed links' record layer: arbitrary bytes, cut into
// frames by the frame decoder, go to RecordCipher::open(). It must never
// crash; a refusal is RecordRefused or a wire error, and every record after
// it is refused too; a record it opens is exactly what sealing the opened
// frame again gives (the same key, direction and number), so nothing but a
// genuine record is ever opened.
#include "invariant.h"
#include "recordkey.h"

#include <mmpi/wire/framedecoder.h>
#include <mmpi/wire/recordcipher.h>

#include <QLoggingCategory>

#include <cstdint>

using namespace mmpi;
using mmpi::fuzz::check;

namespace {

const DecoderLimits Limits{1024 * 1024, 1024 * 1024 + 4096};

bool isWireError(ErrorCode code)
{
    return code >= ErrorCode::BadMagic && code <= ErrorCode::TypeMismatch;
}

RecordCipher makeCipher()
{
    auto cipher = RecordCipher::create(fuzz::recordKey(), RecordCipher::Direction::ConnectorToAcceptor, Limits);
    check(cipher.hasValue(), "cannot make a record cipher");
    return std::move(*cipher);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    QLoggingCategory::setFilterRules(QStringLiteral("mmpi.wire.warning=false"));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FrameDecoder decoder(Limits);
    if (!decoder.feed(QByteArrayView(reinterpret_cast<const char *>(data), qsizetype(size))))
        return 0;
    RecordCipher receiver = makeCipher();
    RecordCipher resealer = makeCipher(); // in step with every record opened
    bool refused = false;
    for (;;) {
        auto next = decoder.next();
        if (!next || !next->has_value())
            break;
        const Frame &record = **next;
        auto opened = receiver.open(record);
        if (!opened) {
            check(opened.error().code == ErrorCode::RecordRefused || isWireError(opened.error().code),
                  "a record refused with an unexpected code");
            check(!opened.error().message.isEmpty(), "a refusal without a reason");
            refused = true;
            continue;
        }
        check(!refused, "a record opened after a refusal");
        check(opened->header.kind != FrameKind::Sealed, "a record inside a record");
        auto resealed = resealer.seal(*opened);
        check(resealed.hasValue(), "an opened frame does not seal again");
        check(resealed->header == record.header && resealed->payload == record.payload,
              "an opened record is not what sealing its frame gives");
    }
    return 0;
}
