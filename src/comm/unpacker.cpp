#include <mmpi/comm/unpacker.h>

#include <QtEndian>

namespace mmpi {

namespace {

constexpr qsizetype RecordLengthSize = sizeof(quint32);

Error truncated(QString message)
{
    return Error(ErrorCode::TruncatedPayload, std::move(message));
}

Error countMismatch(QString message)
{
    return Error(ErrorCode::CountMismatch, std::move(message));
}

bool isObject(ItemType type)
{
    return type == ItemType::Object;
}

} // namespace

Unpacker::Unpacker(QByteArray buffer) : m_buffer(std::move(buffer)) {}

Result<QString> Unpacker::unpackString()
{
    const auto units = take<char16_t>({});
    if (!units)
        return units.error();
    return QString(reinterpret_cast<const QChar *>(units->constData()), units->size());
}

Result<QByteArray> Unpacker::unpackBytes()
{
    const auto bytes = take<quint8>({});
    if (!bytes)
        return bytes.error();
    return QByteArray(reinterpret_cast<const char *>(bytes->constData()), bytes->size());
}

Result<QByteArray> Unpacker::unpackObjectBytes()
{
    const auto record = nextObject();
    if (!record)
        return record.error();
    m_position = record->end;
    return record->bytes;
}

std::optional<ItemType> Unpacker::peekType() const
{
    const auto header = readHeader();
    return header ? std::optional(header->type) : std::nullopt;
}

std::optional<quint32> Unpacker::peekCount() const
{
    const auto header = readHeader();
    return header ? std::optional(header->count) : std::nullopt;
}

Result<Unpacker::Run> Unpacker::nextRun(ItemType wanted, bool (*accepts)(ItemType),
                                        Capacity capacity) const
{
    const auto header = readHeader();
    if (!header)
        return header.error();
    if (!accepts(header->type))
        return Error(ErrorCode::TypeMismatch,
                     QStringLiteral("run at byte %1 holds %2 items, cannot unpack as %3")
                         .arg(m_position).arg(itemTypeName(header->type), itemTypeName(wanted)));
    // Extent before capacity or body: a count is believed only once the bytes
    // it implies are known to be in the buffer, so nothing is allocated for it.
    const auto end = bodyEnd(*header);
    if (!end)
        return end.error();
    if (auto ok = checkCapacity(*header, capacity); !ok)
        return ok.error();
    // A real copy, not QByteArray::fromRawData: what decoding returns (object
    // records above all) must not point into a buffer the caller may outlive.
    const qsizetype begin = m_position + Packer::RunHeaderSize;
    Run run{header->type, header->count, m_buffer.mid(begin, *end - begin), *end};
    if (auto ok = validatePayload(run.type, run.count, run.body); !ok)
        return Error(ok.error().code, QStringLiteral("run at byte %1: %2")
                                          .arg(m_position).arg(ok.error().message));
    return run;
}

Result<Unpacker::Header> Unpacker::readHeader() const
{
    const qsizetype remaining = m_buffer.size() - m_position;
    if (remaining == 0)
        return truncated(QStringLiteral("nothing left to unpack: all %1 bytes of the buffer "
                                        "are consumed").arg(m_buffer.size()));
    if (remaining < Packer::RunHeaderSize)
        return truncated(QStringLiteral("run header at byte %1 needs %2 bytes but only %3 remain")
                             .arg(m_position).arg(Packer::RunHeaderSize).arg(remaining));
    const quint8 code = quint8(m_buffer.at(m_position));
    const auto type = itemTypeFromCode(code);
    if (!type)
        return Error(ErrorCode::BadItemType, QStringLiteral("run at byte %1 has unknown item type "
                                                            "code %2").arg(m_position).arg(code));
    return Header{*type, qFromBigEndian<quint32>(m_buffer.constData() + m_position + 1)};
}

Result<qsizetype> Unpacker::bodyEnd(const Header &header) const
{
    if (header.type == ItemType::Object)
        return objectRunEnd(header.count);
    // 64-bit: 0xFFFFFFFF Longs must not wrap around to a size that fits.
    const qint64 begin = m_position + Packer::RunHeaderSize;
    const qint64 needed = qint64(header.count) * itemSize(header.type);
    const qint64 remaining = m_buffer.size() - begin;
    if (needed > remaining)
        return truncated(QStringLiteral("run of %1 %2 items at byte %3 needs %4 bytes but only "
                                        "%5 remain")
                             .arg(header.count).arg(itemTypeName(header.type))
                             .arg(m_position).arg(needed).arg(remaining));
    return qsizetype(begin + needed);
}

// An Object run's length is the sum of its records', so finding where it ends
// means walking them. Each step consumes at least a 4-byte length, so a hostile
// count costs at most a walk over the buffer.
Result<qsizetype> Unpacker::objectRunEnd(quint32 count) const
{
    const qsizetype size = m_buffer.size();
    qsizetype pos = m_position + Packer::RunHeaderSize;
    for (quint32 i = 0; i < count; ++i) {
        if (size - pos < RecordLengthSize)
            return truncated(QStringLiteral("Object record %1 of %2 in the run at byte %3 has no "
                                            "room for its length: %4 bytes remain")
                                 .arg(i + 1).arg(count).arg(m_position).arg(size - pos));
        const qint64 length = qFromBigEndian<quint32>(m_buffer.constData() + pos);
        pos += RecordLengthSize;
        if (length > size - pos)
            return truncated(QStringLiteral("Object record %1 of %2 in the run at byte %3 claims "
                                            "%4 bytes but only %5 remain")
                                 .arg(i + 1).arg(count).arg(m_position).arg(length).arg(size - pos));
        pos += qsizetype(length);
    }
    return pos;
}

Result<void> Unpacker::checkCapacity(const Header &header, Capacity capacity) const
{
    if (capacity.kind == Capacity::ExactlyOne && header.count != 1)
        return countMismatch(QStringLiteral("run at byte %1 holds %2 %3 items, expected exactly 1")
                                 .arg(m_position).arg(header.count).arg(itemTypeName(header.type)));
    if (capacity.kind == Capacity::AtMost && header.count > capacity.items)
        return truncated(QStringLiteral("run of %1 %2 items does not fit a buffer of %3")
                             .arg(header.count).arg(itemTypeName(header.type)).arg(capacity.items));
    return success();
}

Result<Unpacker::ObjectRecord> Unpacker::nextObject() const
{
    const auto run = nextRun(ItemType::Object, &isObject, {Capacity::ExactlyOne});
    if (!run)
        return run.error();
    const auto records = decodeObjects(run->count, run->body);
    if (!records)
        return records.error();
    return ObjectRecord{records->first(), run->end};
}

Result<void> Unpacker::checkStreamed(const QDataStream &in, qsizetype recordSize)
{
    if (in.status() == QDataStream::ReadPastEnd)
        return countMismatch(QStringLiteral("object record of %1 bytes ended before the value "
                                            "was read").arg(recordSize));
    if (in.status() != QDataStream::Ok)
        return countMismatch(QStringLiteral("object record of %1 bytes is not a valid "
                                            "serialization of the requested type").arg(recordSize));
    if (!in.atEnd())
        return countMismatch(QStringLiteral("object record of %1 bytes has %2 bytes left over "
                                            "after the value")
                                 .arg(recordSize).arg(recordSize - in.device()->pos()));
    return success();
}

} // namespace mmpi
