// libFuzzer target for the edu.rit.mp stream decoder (mmpi::mp::Decoder): a
// PJ peer's bytes, split anywhere, must never crash it, hang it or make it
// allocate for bytes that never came (run.sh's malloc limit is below the
// decoder's message limit), and what it yields must be exactly what an
// independent reading of the header rules gives, whatever the split.
//
// Input layout: byte 0 mod 8 is the number k of chunk-size bytes after it;
// the stream (the rest) is fed in chunks of those sizes in turn (size 0 = an
// empty feed, then one byte); k = 0 feeds it whole.
#include "invariant.h"

#include <mmpi/mp/codec.h>
#include <mmpi/mp/decoder.h>

#include <QtEndian>

#include <cstdint>

using namespace mmpi;
using mmpi::fuzz::check;
using namespace mmpi::mp;

namespace {

// Far above run.sh's -malloc_limit_mb, so a decoder that allocated a
// message's payload up front, before its bytes arrived, is caught.
constexpr qint64 MaxMessageSize = 16 * 1024 * 1024;

// What the decoder saw: every message, and the error with the feed it came on.
struct Outcome
{
    QList<Message> messages;
    qsizetype fedBefore = 0; // bytes fed before the feed that failed (or all of them)
    qsizetype failedChunk = 0;
    Error failure;
    bool atBoundary = false; // when not failed: finish() found no message cut short
};

void drain(Decoder &decoder, Outcome &out)
{
    while (auto m = decoder.next())
        out.messages.append(std::move(*m));
    check(decoder.readyCount() == 0, "readyCount after draining");
}

// The fault the header at the start of `rest` has, judged from the protocol
// rules (docs/design/protocol.md), and the offset of the byte that reveals it.
struct Fault
{
    ErrorCode code = ErrorCode::NoError;
    qsizetype at = 0;
};

Fault headerFault(QByteArrayView rest)
{
    if (rest.size() < 4)
        return {};
    if (qFromBigEndian<quint32>(rest.data()) != Magic)
        return {ErrorCode::BadMagic, 4};
    if (rest.size() < 9)
        return {};
    const quint8 code = quint8(rest[8]);
    if (code < 1 || code > 13)
        return {ErrorCode::BadItemType, 9};
    if (rest.size() < HeaderSize)
        return {};
    const qint32 count = qFromBigEndian<qint32>(rest.data() + 9);
    if (count < 0)
        return {ErrorCode::BadHeader, HeaderSize};
    if (payloadLength(code, count) > MaxMessageSize)
        return {ErrorCode::FrameTooLarge, HeaderSize};
    return {};
}

void checkFailedStaysFailed(Decoder &decoder)
{
    const Error failure = decoder.failure();
    check(!failure.message.isEmpty(), "error without a message");
    const auto again = decoder.feed(QByteArrayView("\x01\xCB\xF8\x54", 4));
    check(!again && again.error() == failure, "failed decoder accepts bytes again");
    const auto finished = decoder.finish();
    check(!finished && finished.error() == failure, "finish() of a failed decoder does not report its error");
    check(decoder.hasFailed() && !decoder.next() && decoder.readyCount() == 0, "failed decoder yields more");
}

// Feeds `stream` in the chunks `sizes` gives, in turn.
Outcome decode(QByteArrayView stream, QByteArrayView sizes)
{
    Decoder decoder(MaxMessageSize);
    Outcome out;
    qsizetype pos = 0;
    for (qsizetype i = 0; pos < stream.size(); ++i) {
        qsizetype chunk = stream.size() - pos;
        if (!sizes.isEmpty()) {
            const quint8 size = quint8(sizes[i % sizes.size()]);
            if (size == 0)
                check(decoder.feed({}).hasValue(), "an empty feed fails");
            chunk = qMin<qsizetype>(chunk, qMax<int>(1, size));
        }
        const auto fed = decoder.feed(stream.sliced(pos, chunk));
        drain(decoder, out);
        if (!fed) {
            check(decoder.hasFailed() && fed.error() == decoder.failure(), "feed error is not the failure");
            out.fedBefore = pos;
            out.failedChunk = chunk;
            out.failure = fed.error();
            checkFailedStaysFailed(decoder);
            return out;
        }
        check(!decoder.hasFailed(), "failed without feed() saying so");
        pos += chunk;
    }
    out.fedBefore = pos;
    // Not failed: the unread rest is one message cut short, or nothing.
    const auto finished = decoder.finish();
    out.atBoundary = decoder.atBoundary();
    check(finished.hasValue() == out.atBoundary, "finish() disagrees with atBoundary()");
    if (!finished)
        check(finished.error().code == ErrorCode::TruncatedPayload && !finished.error().message.isEmpty(),
              "wrong error for a stream cut inside a message");
    return out;
}

// encodeMessage's bytes for a message decode to that message and nothing else.
void checkRoundTrip(const Message &message)
{
    const auto bytes = encodeMessage(message);
    check(bytes.hasValue(), "encodeMessage refuses a well-formed message");
    Decoder decoder(MaxMessageSize);
    check(decoder.feed(*bytes).hasValue(), "re-encoded message refused");
    const auto again = decoder.next();
    check(again && *again == message, "re-encoded message decodes differently");
    check(!decoder.next() && decoder.atBoundary() && decoder.finish().hasValue(), "re-encoded message leaves bytes");
}

// Values read as T: all `count` of them, the items' bytes again (bool
// normalises to 0/1), and every way MMPI can send them makes a message that
// goes through the codec unchanged.
template<Primitive T>
void checkValues(const Message &m)
{
    const auto values = decodeValues<T>(m);
    check(values.hasValue() == codeDecodesAs<T>(m.typeCode), "decodeValues and codeDecodesAs disagree");
    if (!values) {
        check(values.error().code == ErrorCode::TypeMismatch && !values.error().message.isEmpty(),
              "wrong error for a type mismatch");
        return;
    }
    check(values->size() == m.count, "decodeValues does not give count values");
    const std::span<const T> span(values->constData(), values->size());
    QByteArray expected = m.items;
    if constexpr (std::same_as<T, bool>)
        for (char &c : expected)
            c = c ? 1 : 0;
    check(encodeValues<T>(span) == expected, "values do not re-encode to the items");
    if (m.count > 0) {
        const auto shortOne = decodeValues<T>(m.typeCode, m.count, QByteArrayView(m.items).chopped(1));
        check(!shortOne && shortOne.error().code == ErrorCode::CountMismatch, "too few item bytes accepted");
    }
    for (quint8 code = 1; code <= 13; ++code) {
        const auto as = ItemType(code);
        if (!canSendAs<T>(as) || !sendCode(as))
            continue;
        const auto sent = makeMessage<T>(m.tag, span, as);
        check(sent.hasValue() && sent->typeCode == *sendCode(as), "makeMessage refuses a valid type");
        check(codeDecodesAs<T>(sent->typeCode), "MMPI sends a code it cannot read back as the same type");
        checkRoundTrip(*sent);
    }
}

void checkMessage(const Message &m)
{
    check(typeFromCode(m.typeCode).has_value() && m.count >= 0, "message with a bad header");
    check(m.items.size() == payloadLength(m.typeCode, m.count), "payload size does not match code and count");
    check(m.items.size() <= MaxMessageSize, "message over the limit");
    checkRoundTrip(m);
    checkValues<bool>(m);
    checkValues<qint8>(m);
    checkValues<quint8>(m);
    checkValues<qint16>(m);
    checkValues<quint16>(m);
    checkValues<qint32>(m);
    checkValues<qint64>(m);
    checkValues<char16_t>(m);
    checkValues<float>(m);
    checkValues<double>(m);
}

// Without a failure, what is left is less than one whole message.
void checkCutShort(const Outcome &out, QByteArrayView rest)
{
    check(out.atBoundary == rest.isEmpty(), "atBoundary() disagrees with the bytes left");
    if (rest.size() >= HeaderSize) {
        const qint64 length = payloadLength(quint8(rest[8]), qFromBigEndian<qint32>(rest.data() + 9));
        check(rest.size() < HeaderSize + length, "a whole message is left undecoded");
    }
}

// The messages are exactly the start of the stream, and the failure (or its
// absence) is what the next header's bytes call for, reported on the feed
// that brought the revealing byte.
void checkAgainstStream(const Outcome &out, QByteArrayView stream)
{
    QByteArray prefix;
    for (const Message &m : out.messages)
        prefix += *encodeMessage(m);
    check(stream.first(qMin(prefix.size(), stream.size())) == QByteArrayView(prefix),
          "messages are not the stream's prefix");
    const QByteArrayView rest = stream.sliced(prefix.size());
    const Fault fault = headerFault(rest);
    check(out.failure.code == fault.code, "failure differs from the header's fault");
    if (fault.code == ErrorCode::NoError)
        return checkCutShort(out, rest);
    const qsizetype at = prefix.size() + fault.at;
    check(out.fedBefore < at && at <= out.fedBefore + out.failedChunk, "fault reported on the wrong feed");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype k = qMin<qsizetype>(quint8(input[0]) % 8, input.size() - 1);
    const QByteArrayView sizes = input.sliced(1, k);
    const QByteArrayView stream = input.sliced(1 + k);

    const Outcome split = decode(stream, sizes);
    checkAgainstStream(split, stream);
    for (const Message &m : split.messages)
        checkMessage(m);

    // The split changes nothing but where the error is noticed.
    if (!sizes.isEmpty()) {
        const Outcome whole = decode(stream, {});
        check(whole.messages == split.messages, "the split changes the messages");
        check(whole.failure == split.failure, "the split changes the failure");
    }
    return 0;
}
