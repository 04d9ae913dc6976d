#include <mmpi/wire/itemcodec.h>

#include "byteswap.h"

#include <mmpi/wire/bufferpool.h>

#include <QtEndian>

#include <cstring>
#include <iterator>
#include <limits>

namespace mmpi {

namespace {

constexpr qint64 RecordLengthSize = sizeof(quint32);

Error countMismatch(QString message)
{
    return Error(ErrorCode::CountMismatch, std::move(message));
}

// count * itemSize computed in 64 bits: a hostile count of 0xFFFFFFFF times 8
// must not wrap around to something that matches the payload.
Result<void> checkFixedSize(ItemType type, quint32 count, qsizetype payloadSize)
{
    const qint64 expected = qint64(count) * itemSize(type);
    if (expected == qint64(payloadSize))
        return success();
    return countMismatch(QStringLiteral("%1 %2 items need %3 bytes but the payload has %4")
                             .arg(count).arg(itemTypeName(type)).arg(expected).arg(payloadSize));
}

// Boolean is the one fixed-size type with invalid bit patterns: only 0 and 1.
Result<void> checkBooleans(const QByteArray &payload)
{
    for (qsizetype i = 0; i < payload.size(); ++i) {
        const quint8 byte = quint8(payload.at(i));
        if (byte > 1)
            return countMismatch(QStringLiteral("Boolean item %1 of %2 has byte value 0x%3 "
                                                "(must be 0 or 1)")
                                     .arg(i + 1).arg(payload.size())
                                     .arg(QString::number(byte, 16).toUpper().rightJustified(2, u'0')));
    }
    return success();
}

// Walks the Object records of a payload; `visit(offset, length)` sees each
// record body. Shared by validation (no copies) and decoding.
template<typename Visit>
Result<void> walkObjects(quint32 count, const QByteArray &payload, Visit &&visit)
{
    const qint64 size = payload.size();
    qint64 pos = 0;
    for (quint32 i = 0; i < count; ++i) {
        if (size - pos < RecordLengthSize)
            return countMismatch(QStringLiteral("object record %1 of %2 starts at byte %3 but the "
                                                "%4-byte payload has no room for its length")
                                     .arg(i + 1).arg(count).arg(pos).arg(size));
        const qint64 length = qFromBigEndian<quint32>(payload.constData() + pos);
        pos += RecordLengthSize;
        if (length > size - pos)
            return countMismatch(QStringLiteral("object record %1 of %2 claims %3 bytes but only "
                                                "%4 remain in the payload")
                                     .arg(i + 1).arg(count).arg(length).arg(size - pos));
        visit(pos, length);
        pos += length;
    }
    if (pos != size)
        return countMismatch(QStringLiteral("%1 object records end at byte %2 but the payload has "
                                            "%3 bytes")
                                 .arg(count).arg(pos).arg(size));
    return success();
}

template<typename T>
void checkEncodeAs(ItemType as)
{
    // The bytes of T do not depend on `as` (Byte and SignedByte are the same
    // bits), so `as` only matters to the header; a wrong one is a caller bug.
    Q_ASSERT_X(itemTypeDecodesAs<T>(as), "mmpi::encodeItems",
               "`as` must be an item type that decodes as T");
    Q_UNUSED(as);
}

// `count` items of T from `from` to `to` in another order or the same.
template<typename T>
void copyItems(const char *from, qsizetype count, char *to, bool swap)
{
    if (swap)
        detail::swapItemBytes(int(sizeof(T)), from, count, to);
    else if (to != from)
        std::memcpy(to, from, size_t(count) * sizeof(T));
}

} // namespace

template<typename T>
QByteArray encodeItems(std::span<const T> items, ItemType as, ItemOrder order)
{
    checkEncodeAs<T>(as);
    const qsizetype n = qsizetype(items.size());
    if (n == 0)
        return QByteArray(); // an empty span's data() may be null: no memcpy
    QByteArray out = BufferPool::take(n * qsizetype(sizeof(T)));
    if constexpr (std::is_same_v<T, bool>) {
        // sizeof(bool) is 1 but its object representation is not ours to copy.
        for (qsizetype i = 0; i < n; ++i)
            out[i] = items[size_t(i)] ? 1 : 0;
    } else {
        // Byte-wise: exact bits for floats too (NaN payloads, -0.0).
        copyItems<T>(reinterpret_cast<const char *>(items.data()), n, out.data(), order != HostItemOrder);
    }
    return out;
}

template<typename T>
Result<void> decodeItemsInto(ItemType type, quint32 count, const QByteArray &payload, std::span<T> out,
                             ItemOrder order)
{
    if (!itemTypeDecodesAs<T>(type))
        return Error(ErrorCode::TypeMismatch,
                     QStringLiteral("payload holds %1 items, cannot decode as %2")
                         .arg(itemTypeName(type), itemTypeName(ItemTraits<T>::type)));
    if (auto ok = checkFixedSize(type, count, payload.size()); !ok)
        return ok.error();
    if (qint64(out.size()) < qint64(count))
        return Error(ErrorCode::TruncatedPayload,
                     QStringLiteral("a message of %1 %2 items does not fit a buffer of %3")
                         .arg(count).arg(itemTypeName(type)).arg(out.size()));
    if (count == 0)
        return success(); // an empty span's data() may be null: no memcpy
    if constexpr (std::is_same_v<T, bool>) {
        if (auto ok = checkBooleans(payload); !ok)
            return ok.error();
        for (quint32 i = 0; i < count; ++i)
            out[i] = payload.at(i) != 0;
    } else {
        copyItems<T>(payload.constData(), qsizetype(count), reinterpret_cast<char *>(out.data()),
                     order != HostItemOrder);
    }
    return success();
}

template<typename T>
Result<QList<T>> decodeItems(ItemType type, quint32 count, const QByteArray &payload, ItemOrder order)
{
    // Type and size are checked before allocating: count is then bounded by real bytes.
    if (!itemTypeDecodesAs<T>(type) || qint64(count) * itemSize(type) != payload.size()) {
        auto checked = decodeItemsInto<T>(type, count, payload, std::span<T>());
        return checked.error();
    }
    // Bytes need no swap: one copy. Other sizes go to a list left
    // uninitialized, copied or swapped into place in one pass.
    if constexpr (sizeof(T) == 1 && !std::is_same_v<T, bool>) {
        const T *begin = reinterpret_cast<const T *>(payload.constData());
        return QList<T>(begin, begin + count);
    } else {
        QList<T> out = detail::uninitializedList<T>(static_cast<qsizetype>(count));
        if (auto ok = decodeItemsInto<T>(type, count, payload, std::span<T>(out.data(), size_t(out.size())), order);
            !ok)
            return ok.error();
        return out;
    }
}

#define MMPI_INSTANTIATE_ITEM_CODEC(T)                                                    \
    template QByteArray encodeItems<T>(std::span<const T>, ItemType, ItemOrder);                     \
    template Result<QList<T>> decodeItems<T>(ItemType, quint32, const QByteArray &, ItemOrder);      \
    template Result<void> decodeItemsInto<T>(ItemType, quint32, const QByteArray &, std::span<T>, ItemOrder);

MMPI_INSTANTIATE_ITEM_CODEC(bool)
MMPI_INSTANTIATE_ITEM_CODEC(qint8)
MMPI_INSTANTIATE_ITEM_CODEC(quint8)
MMPI_INSTANTIATE_ITEM_CODEC(qint16)
MMPI_INSTANTIATE_ITEM_CODEC(quint16)
MMPI_INSTANTIATE_ITEM_CODEC(qint32)
MMPI_INSTANTIATE_ITEM_CODEC(qint64)
MMPI_INSTANTIATE_ITEM_CODEC(char16_t)
MMPI_INSTANTIATE_ITEM_CODEC(float)
MMPI_INSTANTIATE_ITEM_CODEC(double)

#undef MMPI_INSTANTIATE_ITEM_CODEC

QByteArray reorderItems(ItemType type, QByteArray payload, ItemOrder from, ItemOrder to)
{
    const int size = itemSize(type);
    if (from == to || size <= 1 || payload.isEmpty())
        return payload;
    const qsizetype count = payload.size() / size;
    if (payload.isDetached()) {
        swapItemsInPlace(type, payload.data(), count);
        return payload;
    }
    QByteArray out = BufferPool::take(payload.size());
    detail::swapItemBytes(size, payload.constData(), count, out.data());
    std::memcpy(out.data() + count * size, payload.constData() + count * size, size_t(payload.size() - count * size));
    return out;
}

void swapItemsInPlace(ItemType type, char *data, qsizetype count)
{
    if (const int size = itemSize(type); size > 1 && count > 0)
        detail::swapItemBytes(size, data, count, data);
}

QByteArray encodeObjects(const QList<QByteArray> &objects)
{
    qsizetype total = 0;
    for (const QByteArray &o : objects)
        total += RecordLengthSize + o.size();
    QByteArray out;
    out.reserve(total);
    for (const QByteArray &o : objects) {
        Q_ASSERT(o.size() <= qsizetype(std::numeric_limits<quint32>::max()));
        char length[RecordLengthSize];
        qToBigEndian<quint32>(quint32(o.size()), length);
        out.append(length, RecordLengthSize);
        out.append(o);
    }
    return out;
}

Result<QList<QByteArray>> decodeObjects(quint32 count, const QByteArray &payload)
{
    QList<QByteArray> out;
    // Every record takes at least its 4-byte length, so this bounds the
    // reservation by the payload rather than by the (untrusted) count.
    out.reserve(qMin<qint64>(count, payload.size() / RecordLengthSize));
    auto ok = walkObjects(count, payload, [&](qint64 offset, qint64 length) {
        out.append(payload.mid(offset, length));
    });
    if (!ok)
        return ok.error();
    return out;
}

Result<void> validatePayload(ItemType type, quint32 count, const QByteArray &payload)
{
    // An ItemType cast from an unchecked byte would otherwise pass as size 0.
    if (!itemTypeFromCode(quint8(type)))
        return Error(ErrorCode::BadItemType, QStringLiteral("unknown item type code %1")
                                                 .arg(quint8(type)));
    switch (type) {
    case ItemType::None:
        if (count != 0 || !payload.isEmpty())
            return countMismatch(QStringLiteral("a None frame must have no items, got count %1 "
                                                "and %2 payload bytes")
                                     .arg(count).arg(payload.size()));
        return success();
    case ItemType::Object:
        return walkObjects(count, payload, [](qint64, qint64) {});
    case ItemType::Boolean:
        if (auto ok = checkFixedSize(type, count, payload.size()); !ok)
            return ok;
        return checkBooleans(payload);
    default:
        return checkFixedSize(type, count, payload.size());
    }
}

} // namespace mmpi
