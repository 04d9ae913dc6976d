// Typed item codec: contiguous runs of edu.rit.mp items to and from their
// big-endian wire form, and opaque objects (Qt-serialized bytes). Decoding
// checks the declared type and count against the payload before touching it.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/itemtype.h>

#include <QByteArray>
#include <QList>

#include <span>

namespace mmpi {

// Encode `items` as the payload of `ItemTraits<T>::type` (or of `as`, which must
// have the same size and signedness family, e.g. SignedByte for qint8).
template<typename T>
QByteArray encodeItems(std::span<const T> items, ItemType as = ItemTraits<T>::type);

// Decode a payload declared as (type, count) into T. Errors: TypeMismatch
// (naming both types), CountMismatch (payload size != count * item size).
template<typename T>
Result<QList<T>> decodeItems(ItemType type, quint32 count, const QByteArray &payload);

// Decode straight into `out` (no allocation). Errors as decodeItems(), plus
// TruncatedPayload when the message has more items than `out` holds.
template<typename T>
Result<void> decodeItemsInto(ItemType type, quint32 count, const QByteArray &payload, std::span<T> out);

// Objects: each record is a quint32 big-endian length then that many bytes.
QByteArray encodeObjects(const QList<QByteArray> &objects);
Result<QList<QByteArray>> decodeObjects(quint32 count, const QByteArray &payload);

// Validate that a payload of `length` bytes can hold `count` items of `type`
// (exact for fixed-size types; records parse exactly for Object).
Result<void> validatePayload(ItemType type, quint32 count, const QByteArray &payload);

} // namespace mmpi
