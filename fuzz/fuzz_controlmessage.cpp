// libFuzzer target for the world's control messages (src/world/controlmessage.h),
// the first bytes a node reads from a peer it has not authenticated yet:
// controlType() and decodeControl<T>() for every type must never crash or
// hang, must refuse with ProtocolViolation whatever is not exactly one record
// of the frame's type, and every record they accept must satisfy the
// documented field rules, be the one encoding of itself (encodeControl gives
// the payload back) and decode again to an equal record.
//
// Input layout: byte 0 builds the frame around the rest (the payload): bits
// 0-4 the tag t (types are 1..16; t of 24..31 is the negative tag 23 - t),
// bit 5 a Data frame instead of Control, bit 6 the payload padded with zeros
// to exactly MaxControlPayload, bit 7 to one byte more.
#include "controlmessage.h" // src/world
#include "invariant.h"

#include <cstdint>

using namespace mmpi;
using mmpi::fuzz::check;
using namespace mmpi::detail;

namespace {

void checkRefusal(const Error &error)
{
    check(error.code == ErrorCode::ProtocolViolation && !error.message.isEmpty(),
          "refusal without ProtocolViolation and a reason");
}

// The rules controlmessage.h promises beyond "it parsed".
void checkFields(const Challenge &m)
{
    check(m.nonce.size() == NonceSize && m.publicKey.size() == PublicKeySize, "challenge nonce or key size");
}
void checkFields(const Response &m)
{
    check(m.nonce.size() == NonceSize && m.mac.size() == MacSize && m.publicKey.size() == PublicKeySize,
          "response nonce, MAC or key size");
    check(m.purpose >= LinkPurpose::Join && m.purpose <= LinkPurpose::Invite, "response with an unknown purpose");
}
void checkFields(const Accept &m) { check(m.mac.size() == MacSize, "accept MAC size"); }
void checkFields(const RankTable &m)
{
    check(!m.entries.isEmpty(), "empty rank table");
    for (qsizetype i = 0; i < m.entries.size(); ++i)
        check(m.entries[i].rank == i, "rank table not ranks 0..n-1 in order");
}
void checkFields(const JoinRefused &m)
{
    check(m.cause == JoinRefusal::Rejected || m.cause == JoinRefusal::NotConfirmed, "join refusal with an unknown cause");
}
void checkFields(const auto &) {}

// Encoding writes every field self-delimited, null and empty strings apart,
// so equal encodings mean equal records: the record round trip is checked on
// the bytes.
template<typename Message>
void checkAccepted(const Message &record, const Frame &frame)
{
    checkFields(record);
    const Frame again = encodeControl(record);
    check(again.header.kind == FrameKind::Control && again.header.tag == qint32(Message::type),
          "encodeControl writes another kind or tag");
    check(again.payload == frame.payload, "an accepted payload is not the record's encoding");
    const auto redecoded = decodeControl<Message>(again);
    check(redecoded.hasValue(), "the re-encoded record does not decode");
    check(encodeControl(*redecoded).payload == again.payload, "the re-encoded record decodes to another");

    // Exactly one record: a byte less or a byte more is refused.
    Frame longer = frame;
    longer.payload.append('\0');
    check(!decodeControl<Message>(longer), "a record with a trailing byte is accepted");
    if (!frame.payload.isEmpty()) {
        Frame shorter = frame;
        shorter.payload.chop(1);
        check(!decodeControl<Message>(shorter), "a record without its last byte is accepted");
    }
}

template<typename Message>
void checkDecode(const Frame &frame, const Result<ControlType> &type)
{
    const auto record = decodeControl<Message>(frame);
    if (!type || *type != Message::type) {
        check(!record, "a record decoded from a frame of another type");
        checkRefusal(record.error());
        return;
    }
    if (!record)
        return checkRefusal(record.error());
    checkAccepted(*record, frame);
}

Frame frameFor(quint8 control, QByteArrayView rest)
{
    QByteArray payload = rest.toByteArray();
    if (control & 0x80)
        payload.resize(MaxControlPayload + 1, '\0');
    else if (control & 0x40)
        payload.resize(MaxControlPayload, '\0');
    const FrameKind kind = control & 0x20 ? FrameKind::Data : FrameKind::Control;
    Frame frame = makeFrame(kind, ItemType::UnsignedByte, quint32(payload.size()), payload);
    // Tags past the last type and below the first, negative ones included.
    const qint32 tag = control & 0x1F;
    frame.header.tag = tag >= 24 ? 23 - tag : tag;
    return frame;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    const Frame frame = frameFor(quint8(input[0]), input.sliced(1));

    const auto type = controlType(frame);
    const qint32 tag = frame.header.tag;
    const bool valid = frame.header.kind == FrameKind::Control && tag >= 1 && tag <= qint32(LastControlType)
        && frame.payload.size() <= MaxControlPayload;
    check(type.hasValue() == valid, "controlType misjudges kind, tag or size");
    if (type)
        check(qint32(*type) == tag, "controlType is not the tag");
    else
        checkRefusal(type.error());

    checkDecode<Challenge>(frame, type);
    checkDecode<Response>(frame, type);
    checkDecode<Accept>(frame, type);
    checkDecode<Refuse>(frame, type);
    checkDecode<RankTable>(frame, type);
    checkDecode<MeshReady>(frame, type);
    checkDecode<Start>(frame, type);
    checkDecode<Abort>(frame, type);
    checkDecode<Resume>(frame, type);
    checkDecode<KeyMismatch>(frame, type);
    checkDecode<Rejoined>(frame, type);
    checkDecode<GivenUp>(frame, type);
    checkDecode<JoinRefused>(frame, type);
    return 0;
}
