#include "controlmessage.h"

#include <mmpi/world/worldconfig.h>

#include <QDataStream>
#include <QIODevice>

namespace mmpi::detail {

namespace {

constexpr auto StreamVersion = QDataStream::Qt_6_4;
// Longest string field accepted: node ids, world names, addresses, reasons.
constexpr int MaxStringLength = 1024;
constexpr int MaxRankEntries = WorldConfig::MaxSize;

Error violation(const QString &message)
{
    return {ErrorCode::ProtocolViolation, message};
}

void write(QDataStream &s, const Challenge &m) { s << m.worldName << m.nodeId << m.nonce << m.publicKey; }
void write(QDataStream &s, const Response &m)
{
    s << quint8(m.purpose) << m.nonce << m.mac << m.nodeId << m.rank << m.listenAddress << m.publicKey;
}
void write(QDataStream &s, const Accept &m) { s << m.mac << m.rank << m.listenAddress; }
void write(QDataStream &s, const Refuse &m) { s << m.reason; }
void write(QDataStream &s, const Abort &m) { s << m.reason; }
void write(QDataStream &s, const Resume &m) { s << m.received; }
void write(QDataStream &, const MeshReady &) {}
void write(QDataStream &, const Start &) {}
void write(QDataStream &, const KeyMismatch &) {}
void write(QDataStream &s, const Rejoined &m) { s << m.entry.rank << m.entry.nodeId << m.entry.address; }
void write(QDataStream &s, const GivenUp &m) { s << m.rank << m.nodeId << m.reason; }
void write(QDataStream &s, const JoinRefused &m) { s << quint8(m.cause) << m.reason; }
void write(QDataStream &s, const RankTable &m)
{
    s << quint32(m.entries.size());
    for (const auto &e : m.entries)
        s << e.rank << e.nodeId << e.address;
}

void read(QDataStream &s, Challenge &m) { s >> m.worldName >> m.nodeId >> m.nonce >> m.publicKey; }
void read(QDataStream &s, Response &m)
{
    quint8 purpose = 0;
    s >> purpose >> m.nonce >> m.mac >> m.nodeId >> m.rank >> m.listenAddress >> m.publicKey;
    if (purpose < quint8(LinkPurpose::Join) || purpose > quint8(LinkPurpose::Invite))
        s.setStatus(QDataStream::ReadCorruptData);
    m.purpose = LinkPurpose(purpose);
}
void read(QDataStream &s, Accept &m) { s >> m.mac >> m.rank >> m.listenAddress; }
void read(QDataStream &s, Refuse &m) { s >> m.reason; }
void read(QDataStream &s, Abort &m) { s >> m.reason; }
void read(QDataStream &s, Resume &m) { s >> m.received; }
void read(QDataStream &, MeshReady &) {}
void read(QDataStream &, Start &) {}
void read(QDataStream &, KeyMismatch &) {}
void read(QDataStream &s, Rejoined &m) { s >> m.entry.rank >> m.entry.nodeId >> m.entry.address; }
void read(QDataStream &s, GivenUp &m) { s >> m.rank >> m.nodeId >> m.reason; }
void read(QDataStream &s, JoinRefused &m)
{
    quint8 cause = 0;
    s >> cause >> m.reason;
    if (cause < quint8(JoinRefusal::Rejected) || cause > quint8(JoinRefusal::NotConfirmed))
        s.setStatus(QDataStream::ReadCorruptData);
    m.cause = JoinRefusal(cause);
}
void read(QDataStream &s, RankTable &m)
{
    quint32 count = 0;
    s >> count;
    if (count > MaxRankEntries) {
        s.setStatus(QDataStream::ReadCorruptData);
        return;
    }
    for (quint32 i = 0; i < count && s.status() == QDataStream::Ok; ++i) {
        RankEntry e;
        s >> e.rank >> e.nodeId >> e.address;
        m.entries.append(e);
    }
}

bool stringsFit(std::initializer_list<const QString *> strings)
{
    for (const QString *s : strings)
        if (s->size() > MaxStringLength)
            return false;
    return true;
}

// Field checks beyond "it parsed": sizes of nonces and MACs, string lengths,
// a rank table that lists ranks 0..n-1 in order.
Result<void> check(const Challenge &m)
{
    if (m.nonce.size() != NonceSize || m.publicKey.size() != PublicKeySize || !stringsFit({&m.worldName, &m.nodeId}))
        return violation(QStringLiteral("malformed challenge"));
    return success();
}
Result<void> check(const Response &m)
{
    if (m.nonce.size() != NonceSize || m.mac.size() != MacSize || m.publicKey.size() != PublicKeySize
        || !stringsFit({&m.nodeId, &m.listenAddress}))
        return violation(QStringLiteral("malformed response"));
    return success();
}
Result<void> check(const Accept &m)
{
    if (m.mac.size() != MacSize || !stringsFit({&m.listenAddress}))
        return violation(QStringLiteral("malformed accept"));
    return success();
}
Result<void> check(const Refuse &m)
{
    return stringsFit({&m.reason}) ? success() : violation(QStringLiteral("malformed refusal"));
}
Result<void> check(const Abort &m)
{
    return stringsFit({&m.reason}) ? success() : violation(QStringLiteral("malformed abort"));
}
Result<void> check(const MeshReady &) { return success(); }
Result<void> check(const Resume &) { return success(); }
Result<void> check(const Start &) { return success(); }
Result<void> check(const KeyMismatch &) { return success(); }
Result<void> check(const Rejoined &m)
{
    if (m.entry.rank < 0 || m.entry.nodeId.isEmpty() || m.entry.address.isEmpty()
        || !stringsFit({&m.entry.nodeId, &m.entry.address}))
        return violation(QStringLiteral("malformed rejoin notice"));
    return success();
}
Result<void> check(const GivenUp &m)
{
    if (m.rank < 0 || m.rank >= MaxRankEntries || m.nodeId.isEmpty() || !stringsFit({&m.nodeId, &m.reason}))
        return violation(QStringLiteral("malformed give-up notice"));
    return success();
}
Result<void> check(const JoinRefused &m)
{
    return stringsFit({&m.reason}) ? success() : violation(QStringLiteral("malformed join refusal"));
}
Result<void> check(const RankTable &m)
{
    if (m.entries.isEmpty())
        return violation(QStringLiteral("empty rank table"));
    for (int i = 0; i < m.entries.size(); ++i) {
        const auto &e = m.entries.at(i);
        if (e.rank != i || !stringsFit({&e.nodeId, &e.address}))
            return violation(QStringLiteral("malformed rank table entry %1").arg(i));
    }
    return success();
}

} // namespace

Result<ControlType> controlType(const Frame &frame)
{
    const qint32 tag = frame.header.tag;
    if (frame.header.kind != FrameKind::Control || tag < qint32(ControlType::UnsealedChallenge)
        || tag > qint32(LastControlType))
        return violation(QStringLiteral("not a control frame (kind %1, tag %2)")
                             .arg(int(frame.header.kind))
                             .arg(tag));
    if (frame.payload.size() > MaxControlPayload)
        return violation(QStringLiteral("control frame of %1 bytes exceeds %2")
                             .arg(frame.payload.size())
                             .arg(MaxControlPayload));
    return ControlType(tag);
}

template<typename Message>
Frame encodeControl(const Message &message)
{
    QByteArray payload;
    QDataStream stream(&payload, QIODevice::WriteOnly);
    stream.setVersion(StreamVersion);
    write(stream, message);
    Frame frame = makeFrame(FrameKind::Control, ItemType::UnsignedByte, quint32(payload.size()), payload);
    frame.header.tag = qint32(Message::type);
    return frame;
}

template<typename Message>
Result<Message> decodeControl(const Frame &frame)
{
    const auto type = controlType(frame);
    if (!type)
        return type.error();
    if (*type != Message::type)
        return violation(QStringLiteral("expected control message %1, got %2")
                             .arg(int(Message::type))
                             .arg(int(*type)));
    QDataStream stream(frame.payload);
    stream.setVersion(StreamVersion);
    Message message;
    read(stream, message);
    if (stream.status() != QDataStream::Ok || !stream.atEnd())
        return violation(QStringLiteral("control message %1 does not parse").arg(int(Message::type)));
    if (auto ok = check(message); !ok)
        return ok.error();
    return message;
}

#define MMPI_CONTROL_MESSAGE(M) \
    template Frame encodeControl<M>(const M &); \
    template Result<M> decodeControl<M>(const Frame &);
MMPI_CONTROL_MESSAGE(Challenge)
MMPI_CONTROL_MESSAGE(Response)
MMPI_CONTROL_MESSAGE(Accept)
MMPI_CONTROL_MESSAGE(Refuse)
MMPI_CONTROL_MESSAGE(RankTable)
MMPI_CONTROL_MESSAGE(MeshReady)
MMPI_CONTROL_MESSAGE(Start)
MMPI_CONTROL_MESSAGE(Abort)
MMPI_CONTROL_MESSAGE(Resume)
MMPI_CONTROL_MESSAGE(KeyMismatch)
MMPI_CONTROL_MESSAGE(Rejoined)
MMPI_CONTROL_MESSAGE(GivenUp)
MMPI_CONTROL_MESSAGE(JoinRefused)
#undef MMPI_CONTROL_MESSAGE

} // namespace mmpi::detail
