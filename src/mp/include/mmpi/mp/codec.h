// The edu.rit.mp wire codec: whole messages to bytes, and typed runs of items
// to and from their big-endian form. Decoding follows the codes PJ really
// sends, so e.g. quint8 values come out of code 10 as well as 12.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/message.h>

#include <QList>
#include <QtEndian>

#include <concepts>
#include <cstring>
#include <span>

namespace mmpi::mp {

// The C++ types that travel as edu.rit.mp items.
template<typename T>
concept Primitive = std::same_as<T, bool> || std::same_as<T, qint8> || std::same_as<T, quint8>
    || std::same_as<T, qint16> || std::same_as<T, quint16> || std::same_as<T, qint32>
    || std::same_as<T, qint64> || std::same_as<T, char16_t> || std::same_as<T, float>
    || std::same_as<T, double>;

// The 13-byte header followed by the items. Errors: BadItemType (unknown code),
// BadHeader (negative N), CountMismatch (items.size() is not N items).
Result<QByteArray> encodeMessage(const Message &message);

// Bytes the items of a (code, N) message occupy; -1 for an unknown code or a
// negative N.
qint64 payloadLength(quint8 code, qint64 count);

// Whether `type` is a valid way to send T: same item size, and bool, float,
// double, char16_t only as themselves. Byte and SignedByte are both valid for
// qint8, Short and SignedShort for qint16.
template<Primitive T>
constexpr bool canSendAs(ItemType type)
{
    if constexpr (std::same_as<T, bool>)
        return type == ItemType::Boolean;
    else if constexpr (std::same_as<T, qint8>)
        return type == ItemType::Byte || type == ItemType::SignedByte;
    else if constexpr (std::same_as<T, quint8>)
        return type == ItemType::UnsignedByte;
    else if constexpr (std::same_as<T, qint16>)
        return type == ItemType::Short || type == ItemType::SignedShort;
    else if constexpr (std::same_as<T, quint16>)
        return type == ItemType::UnsignedShort;
    else
        return type == ItemTraits<T>::type;
}

// Whether items that arrived with `code` can be read as T. One-byte codes
// (1, 2, 10, 12) read as any 8-bit type and as bool, because PJ sends bytes
// with Boolean's code; two-byte integer codes (3, 11, 13) as any 16-bit
// integer, since PJ sends unsigned 16-bit items as code 11.
template<Primitive T>
constexpr bool codeDecodesAs(quint8 code)
{
    const auto type = ItemType(code);
    if constexpr (sizeof(T) == 1)
        return type == ItemType::Boolean || type == ItemType::Byte || type == ItemType::SignedByte
            || type == ItemType::UnsignedByte;
    else if constexpr (std::same_as<T, qint16> || std::same_as<T, quint16>)
        return type == ItemType::Short || type == ItemType::SignedShort || type == ItemType::UnsignedShort;
    else
        return type == ItemTraits<T>::type;
}

namespace detail {
template<Primitive T>
void putValue(char *out, T value)
{
    if constexpr (std::same_as<T, bool>) {
        *out = value ? 1 : 0;
    } else if constexpr (std::same_as<T, float>) {
        quint32 bits;
        std::memcpy(&bits, &value, 4);
        qToBigEndian(bits, out);
    } else if constexpr (std::same_as<T, double>) {
        quint64 bits;
        std::memcpy(&bits, &value, 8);
        qToBigEndian(bits, out);
    } else if constexpr (std::same_as<T, char16_t>) {
        qToBigEndian(quint16(value), out);
    } else {
        qToBigEndian(value, out);
    }
}

template<Primitive T>
T getValue(const char *in)
{
    if constexpr (std::same_as<T, bool>) {
        return *in != 0;
    } else if constexpr (std::same_as<T, float>) {
        const quint32 bits = qFromBigEndian<quint32>(in);
        float value;
        std::memcpy(&value, &bits, 4);
        return value;
    } else if constexpr (std::same_as<T, double>) {
        const quint64 bits = qFromBigEndian<quint64>(in);
        double value;
        std::memcpy(&value, &bits, 8);
        return value;
    } else if constexpr (std::same_as<T, char16_t>) {
        return char16_t(qFromBigEndian<quint16>(in));
    } else {
        return qFromBigEndian<T>(in);
    }
}

Error typeMismatch(quint8 code, const char *cppType);

template<Primitive T>
constexpr const char *primitiveName()
{
    if constexpr (std::same_as<T, bool>) return "bool";
    else if constexpr (std::same_as<T, qint8>) return "qint8";
    else if constexpr (std::same_as<T, quint8>) return "quint8";
    else if constexpr (std::same_as<T, qint16>) return "qint16";
    else if constexpr (std::same_as<T, quint16>) return "quint16";
    else if constexpr (std::same_as<T, qint32>) return "qint32";
    else if constexpr (std::same_as<T, qint64>) return "qint64";
    else if constexpr (std::same_as<T, char16_t>) return "char16_t";
    else if constexpr (std::same_as<T, float>) return "float";
    else return "double";
}
} // namespace detail

// The items of a run of values, big-endian, no padding.
template<Primitive T>
QByteArray encodeValues(std::span<const T> values)
{
    QByteArray bytes(qsizetype(values.size() * sizeof(T)), Qt::Uninitialized);
    char *out = bytes.data();
    for (const T &value : values) {
        detail::putValue<T>(out, value);
        out += sizeof(T);
    }
    return bytes;
}

// A message of `values` with the code PJ would send for `as` (see sendCode()).
// TypeMismatch if canSendAs<T>(as) is false.
template<Primitive T>
Result<Message> makeMessage(qint32 tag, std::span<const T> values, ItemType as = ItemTraits<T>::type)
{
    const auto code = sendCode(as);
    if (!canSendAs<T>(as) || !code)
        return Error(ErrorCode::TypeMismatch,
                     QStringLiteral("%1-byte C++ values cannot be sent as edu.rit.mp %2 items")
                         .arg(sizeof(T)).arg(itemTypeName(as)));
    return Message{tag, *code, qint32(values.size()), encodeValues(values)};
}

// The items of a message of `code` with `count` items as T. Errors:
// TypeMismatch (see codeDecodesAs), CountMismatch (too few bytes for count).
template<Primitive T>
Result<QList<T>> decodeValues(quint8 code, qint64 count, QByteArrayView items)
{
    if (!codeDecodesAs<T>(code))
        return detail::typeMismatch(code, detail::primitiveName<T>());
    if (count < 0 || items.size() < count * qint64(sizeof(T)))
        return Error(ErrorCode::CountMismatch,
                     QStringLiteral("%1 items of %2 bytes need %3 bytes, the message holds %4")
                         .arg(count).arg(sizeof(T)).arg(count * qint64(sizeof(T))).arg(items.size()));
    QList<T> values;
    values.reserve(count);
    for (qint64 i = 0; i < count; ++i)
        values.append(detail::getValue<T>(items.data() + i * sizeof(T)));
    return values;
}

template<Primitive T>
Result<QList<T>> decodeValues(const Message &message)
{
    return decodeValues<T>(message.typeCode, message.count, message.items);
}

} // namespace mmpi::mp
