// MessageCodec<T>: how a C++ value travels as a message and comes back. Item
// types (bool, qint8 ... double, char16_t) travel as one item or, in a QList or
// std::span, as a run of items; QString as Char items (UTF-16); QByteArray as
// UnsignedByte items; anything else with QDataStream operators as one Object
// record. Items are encoded in the host's byte order (the frame says which,
// docs/design/protocol.md), so that neither side swaps them between little-endian
// hosts. Decoding checks the item type and names both types on a mismatch.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>
#include <mmpi/wire/itemcodec.h>

#include <QByteArray>
#include <QDataStream>
#include <QIODevice>
#include <QList>
#include <QString>

#include <memory>
#include <span>

namespace mmpi {

// A message body: what a Data frame's header and payload say.
struct Payload
{
    ItemType itemType = ItemType::None;
    quint32 count = 0;
    QByteArray bytes;
    // The byte order of the fixed-size items in `bytes`.
    ItemOrder order = WireItemOrder;
    // What `bytes` views if it borrows memory (Frame::owner): kept with it.
    std::shared_ptr<const void> owner = {};
};

namespace detail {
// A received Data frame's message, in the order its flags give.
Payload payloadOf(const Frame &frame);
Payload payloadOf(Frame &&frame);
// The header flags that send `payload` as it is (its items' order).
quint8 frameFlagsOf(const Payload &payload);
// `payload` with its items in the host's order (itself if they are).
Payload inHostOrder(Payload payload);

Error typeMismatch(ItemType carried, const QString &wanted);
Error countNotOne(ItemType carried, quint32 count);
Result<QByteArray> singleObject(const Payload &payload, const char *typeName);
Result<void> checkStreamConsumed(const QDataStream &stream, qsizetype leftover, const char *typeName);
} // namespace detail

template<typename T>
struct MessageCodec
{
    // Any type with QDataStream operators: one Object record.
    static Payload encode(const T &value)
    {
        QByteArray record;
        QDataStream out(&record, QIODevice::WriteOnly);
        out.setVersion(QDataStream::Qt_6_4);
        out << value;
        return {ItemType::Object, 1, encodeObjects({record})};
    }
    static Result<T> decode(const Payload &payload)
    {
        const auto record = detail::singleObject(payload, QMetaType::fromType<T>().name());
        if (!record)
            return record.error();
        QDataStream in(*record);
        in.setVersion(QDataStream::Qt_6_4);
        T value{};
        in >> value;
        if (auto ok = detail::checkStreamConsumed(in, in.device()->bytesAvailable(),
                                                  QMetaType::fromType<T>().name());
            !ok)
            return ok.error();
        return value;
    }
};

template<ItemValue T>
struct MessageCodec<T>
{
    static Payload encode(const T &value)
    {
        return MessageCodec<std::span<const T>>::encode(std::span<const T>(&value, 1));
    }
    static Result<T> decode(const Payload &payload)
    {
        if (payload.count != 1 && itemTypeDecodesAs<T>(payload.itemType))
            return detail::countNotOne(payload.itemType, payload.count);
        T value{};
        if (auto ok = decodeItemsInto<T>(payload.itemType, payload.count, payload.bytes, std::span<T>(&value, 1),
                                         payload.order);
            !ok)
            return ok.error();
        return value;
    }
};

template<ItemValue T>
struct MessageCodec<QList<T>>
{
    static Payload encode(const QList<T> &items)
    {
        return MessageCodec<std::span<const T>>::encode(items);
    }
    // As encode(), but items whose memory is their form are not copied: the
    // payload views a shared copy of the list, which it keeps (Payload::owner;
    // a change to the caller's list afterwards detaches that list, not this).
    static Payload view(const QList<T> &items)
    {
        if constexpr (memoryIsItemForm<T>(HostItemOrder)) {
            if (!items.isEmpty()) {
                auto kept = std::make_shared<const QList<T>>(items);
                Payload p = MessageCodec<std::span<const T>>::view(*kept);
                p.owner = std::move(kept);
                return p;
            }
        }
        return encode(items);
    }
    static Result<QList<T>> decode(const Payload &payload)
    {
        return decodeItems<T>(payload.itemType, payload.count, payload.bytes, payload.order);
    }
};

template<ItemValue T>
struct MessageCodec<std::span<const T>>
{
    static Payload encode(std::span<const T> items)
    {
        return {ItemTraits<T>::type, quint32(items.size()), encodeItems<T>(items, ItemTraits<T>::type, HostItemOrder),
                HostItemOrder};
    }
    static Payload view(std::span<const T> items)
    {
        return {ItemTraits<T>::type, quint32(items.size()), viewOrEncodeItems<T>(items, HostItemOrder),
                HostItemOrder};
    }
};

template<>
struct MessageCodec<QString>
{
    static Payload encode(const QString &text);
    static Result<QString> decode(const Payload &payload);
};

template<>
struct MessageCodec<QByteArray>
{
    static Payload encode(const QByteArray &bytes);
    static Result<QByteArray> decode(const Payload &payload);
};

} // namespace mmpi
