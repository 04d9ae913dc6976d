// Typed item codec: contiguous runs of edu.rit.mp items to and from their
// wire form (big-endian, or little-endian where the frame says so: ItemOrder),
// and opaque objects (Qt-serialized bytes). Decoding checks the declared type
// and count against the payload before touching it.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/itemtype.h>

#include <QByteArray>
#include <QList>

#include <bit>
#include <cstring>
#include <span>
#include <type_traits>

namespace mmpi {

namespace detail {
// A list of `size` items whose values are undefined until written: for a
// decoder that writes every item, QList(size) would first zero them all, a
// second pass over a large list (and its page faults, on fresh memory).
template<typename T>
    requires std::is_trivially_copyable_v<T>
QList<T> uninitializedList(qsizetype size)
{
    if (size == 0)
        return QList<T>();
    auto allocation = QTypedArrayData<T>::allocate(size);
    Q_CHECK_PTR(allocation.second); // as QList(size) does when memory runs out
    return QList<T>(QArrayDataPointer<T>(allocation, size));
}
} // namespace detail

// One item at `at` in the host's byte order, and back: through memcpy, so
// that float bits stay exact (NaN payloads, -0.0). Boolean bytes are 0 or 1.
// No checks: for loops over a payload already validated.
template<ItemValue T>
T loadHostItem(const char *at)
{
    if constexpr (std::is_same_v<T, bool>) {
        return *at != 0;
    } else {
        T value;
        std::memcpy(&value, at, sizeof value);
        return value;
    }
}

template<ItemValue T>
void storeHostItem(char *at, T value)
{
    if constexpr (std::is_same_v<T, bool>)
        *at = value ? 1 : 0;
    else
        std::memcpy(at, &value, sizeof value);
}

// Whether T's items lie in memory exactly as in a payload of `order`: single
// bytes, and every fixed-size type in the host's order; never bool, whose
// object representation is not ours to copy.
template<ItemValue T>
constexpr bool memoryIsItemForm(ItemOrder order)
{
    return !std::is_same_v<T, bool> && (sizeof(T) == 1 || order == HostItemOrder);
}

// Encode `items` as the payload of `ItemTraits<T>::type` (or of `as`, which must
// have the same size and signedness family, e.g. SignedByte for qint8), each
// item in `order`.
template<typename T>
QByteArray encodeItems(std::span<const T> items, ItemType as = ItemTraits<T>::type, ItemOrder order = WireItemOrder);

// The payload of `items` in `order` without an encoding copy where their
// memory is that form: a view (isBorrowed()) that is valid only while they
// are, for a send that copies what it keeps. Else the same as encodeItems().
template<ItemValue T>
QByteArray viewOrEncodeItems(std::span<const T> items, ItemOrder order = WireItemOrder)
{
    if (memoryIsItemForm<T>(order) && !items.empty())
        return QByteArray::fromRawData(reinterpret_cast<const char *>(items.data()), qsizetype(items.size_bytes()));
    return encodeItems<T>(items, ItemTraits<T>::type, order);
}

// Decode a payload declared as (type, count), its items in `order`, into T.
// Errors: TypeMismatch (naming both types), CountMismatch (payload size !=
// count * item size).
template<typename T>
Result<QList<T>> decodeItems(ItemType type, quint32 count, const QByteArray &payload, ItemOrder order = WireItemOrder);

// Decode straight into `out` (no allocation). Errors as decodeItems(), plus
// TruncatedPayload when the message has more items than `out` holds.
template<typename T>
Result<void> decodeItemsInto(ItemType type, quint32 count, const QByteArray &payload, std::span<T> out,
                             ItemOrder order = WireItemOrder);

// The fixed-size items of `type` in `payload`, given in order `from`, in
// order `to`: `payload` itself when the two orders lay them out alike (or the
// items are single bytes or Object records), else swapped, in place when no
// one else shares the bytes. The size is not checked: a partial item at the
// end is left as it is.
QByteArray reorderItems(ItemType type, QByteArray payload, ItemOrder from, ItemOrder to);
// Reverses the bytes of each of the `count` items of `type` at `data`
// (single bytes and Object records: nothing).
void swapItemsInPlace(ItemType type, char *data, qsizetype count);

// Objects: each record is a quint32 big-endian length then that many bytes.
QByteArray encodeObjects(const QList<QByteArray> &objects);
Result<QList<QByteArray>> decodeObjects(quint32 count, const QByteArray &payload);

// Validate that a payload of `length` bytes can hold `count` items of `type`
// (exact for fixed-size types; records parse exactly for Object).
Result<void> validatePayload(ItemType type, quint32 count, const QByteArray &payload);

} // namespace mmpi
