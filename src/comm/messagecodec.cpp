#include <mmpi/comm/messagecodec.h>

namespace mmpi {

namespace detail {

Error typeMismatch(ItemType carried, const QString &wanted)
{
    return {ErrorCode::TypeMismatch,
            QStringLiteral("the message carries %1 items, not %2").arg(itemTypeName(carried), wanted)};
}

Error countNotOne(ItemType carried, quint32 count)
{
    return {ErrorCode::CountMismatch,
            QStringLiteral("the message carries %1 %2 items, not one (receive a QList)")
                .arg(count).arg(itemTypeName(carried))};
}

Result<QByteArray> singleObject(const Payload &payload, const char *typeName)
{
    const QString wanted = QStringLiteral("an Object (%1)").arg(QLatin1String(typeName));
    if (payload.itemType != ItemType::Object)
        return typeMismatch(payload.itemType, wanted);
    if (payload.count != 1)
        return countNotOne(payload.itemType, payload.count);
    auto records = decodeObjects(payload.count, payload.bytes);
    if (!records)
        return records.error();
    return records->first();
}

Result<void> checkStreamConsumed(const QDataStream &stream, qsizetype leftover, const char *typeName)
{
    if (stream.status() != QDataStream::Ok || leftover != 0)
        return Error{ErrorCode::TypeMismatch,
                     QStringLiteral("the Object record does not hold a %1 (%2 bytes left over, stream status %3)")
                         .arg(QLatin1String(typeName)).arg(leftover).arg(int(stream.status()))};
    return success();
}

Payload payloadOf(const Frame &frame)
{
    return {frame.header.itemType, frame.header.count, frame.payload, itemOrderOf(frame.header)};
}

Payload payloadOf(Frame &&frame)
{
    return {frame.header.itemType, frame.header.count, std::move(frame.payload), itemOrderOf(frame.header)};
}

quint8 frameFlagsOf(const Payload &payload)
{
    // Only where the order means something: the decoder refuses the flag on
    // Object records, and single bytes read the same either way.
    return itemSize(payload.itemType) > 1 ? itemOrderFlag(payload.order) : 0;
}

Payload inHostOrder(Payload payload)
{
    payload.bytes = reorderItems(payload.itemType, std::move(payload.bytes), payload.order, HostItemOrder);
    payload.order = HostItemOrder;
    return payload;
}

} // namespace detail

Payload MessageCodec<QString>::encode(const QString &text)
{
    const auto units = std::span<const char16_t>(reinterpret_cast<const char16_t *>(text.utf16()),
                                                 size_t(text.size()));
    return {ItemType::Char, quint32(text.size()), encodeItems<char16_t>(units, ItemType::Char, HostItemOrder),
            HostItemOrder};
}

Result<QString> MessageCodec<QString>::decode(const Payload &payload)
{
    if (payload.itemType != ItemType::Char)
        return detail::typeMismatch(payload.itemType, QStringLiteral("Char (QString)"));
    if (qint64(payload.count) * 2 != payload.bytes.size()) // before allocating
        return decodeItemsInto<char16_t>(payload.itemType, payload.count, payload.bytes, {}, payload.order).error();
    QString text(qsizetype(payload.count), Qt::Uninitialized);
    auto out = std::span<char16_t>(reinterpret_cast<char16_t *>(text.data()), size_t(text.size()));
    if (auto ok = decodeItemsInto<char16_t>(payload.itemType, payload.count, payload.bytes, out, payload.order); !ok)
        return ok.error();
    return text;
}

Payload MessageCodec<QByteArray>::encode(const QByteArray &bytes)
{
    // One byte per item: the payload is the bytes themselves, no conversion.
    return {ItemType::UnsignedByte, quint32(bytes.size()), bytes};
}

Result<QByteArray> MessageCodec<QByteArray>::decode(const Payload &payload)
{
    const ItemType t = payload.itemType;
    if (t != ItemType::UnsignedByte && t != ItemType::Byte && t != ItemType::SignedByte)
        return detail::typeMismatch(t, QStringLiteral("bytes (QByteArray)"));
    return payload.bytes;
}

} // namespace mmpi
