// The item types a message can carry: the edu.rit.mp table (codes as in Parallel
// Java's Constants) plus MMPI's length-prefixed opaque type for Qt-serialized
// objects. ItemTraits<T> maps a C++ type to the item type it travels as.
#pragma once

#include <mmpi/core/error.h> // first: see the comment on the namespace below

#include <QObject>
#include <QString>
#include <QSysInfo>

#include <cstdint>
#include <optional>

namespace mmpi {

// Q_NAMESPACE gives a namespace one staticMetaObject, defined by the moc output
// of the header that declares it. mmpi's belongs to core/error.h; a second
// Q_NAMESPACE for mmpi here would define mmpi::staticMetaObject again, and
// whichever copy the linker kept would lack the other header's enums
// (errorCodeName() then printed "ErrorCode(1)"). So ItemType gets its own
// meta-object in an inline namespace: still mmpi::ItemType, still found by ADL.
// error.h is included above so that its Q_ENUM_NS, which names an unqualified
// staticMetaObject in mmpi, is always compiled before this one exists.
inline namespace itemtypes {
Q_NAMESPACE

enum class ItemType : quint8 {
    None = 0,           // no items: control frames with an empty payload
    Boolean = 1,        // 1 byte, 0 or 1
    Byte = 2,           // 1 byte, -128..127
    Short = 3,          // 2 bytes, -32768..32767
    Int = 4,            // 4 bytes
    Long = 5,           // 8 bytes
    Char = 6,           // 2 bytes, one UTF-16 code unit
    Float = 7,          // 4 bytes, IEEE 754
    Double = 8,         // 8 bytes, IEEE 754
    Object = 9,         // count records, each a quint32 length then that many bytes
    SignedByte = 10,    // 1 byte, -128..127
    SignedShort = 11,   // 2 bytes, -32768..32767
    UnsignedByte = 12,  // 1 byte, 0..255
    UnsignedShort = 13, // 2 bytes, 0..65535
};
Q_ENUM_NS(ItemType)
} // inline namespace itemtypes

// The byte order of a payload's fixed-size items. The wire's own is
// big-endian (docs/design/protocol.md); a Data frame may carry them little-endian
// instead and say so (LittleEndianItems), so that little-endian hosts, nearly
// all of them, exchange items without swapping them on either side.
using ItemOrder = QSysInfo::Endian;
inline constexpr ItemOrder WireItemOrder = QSysInfo::BigEndian;
inline constexpr ItemOrder HostItemOrder = QSysInfo::ByteOrder;

// Size in bytes of one item on the wire; 0 for None and Object (variable).
int itemSize(ItemType type);
// The type for a code read off the wire, or nullopt if the code is unknown.
std::optional<ItemType> itemTypeFromCode(quint8 code);
QString itemTypeName(ItemType type);

template<typename T> struct ItemTraits;
template<> struct ItemTraits<bool> { static constexpr ItemType type = ItemType::Boolean; };
template<> struct ItemTraits<qint8> { static constexpr ItemType type = ItemType::Byte; };
template<> struct ItemTraits<quint8> { static constexpr ItemType type = ItemType::UnsignedByte; };
template<> struct ItemTraits<qint16> { static constexpr ItemType type = ItemType::Short; };
template<> struct ItemTraits<quint16> { static constexpr ItemType type = ItemType::UnsignedShort; };
template<> struct ItemTraits<qint32> { static constexpr ItemType type = ItemType::Int; };
template<> struct ItemTraits<qint64> { static constexpr ItemType type = ItemType::Long; };
template<> struct ItemTraits<char16_t> { static constexpr ItemType type = ItemType::Char; };
template<> struct ItemTraits<float> { static constexpr ItemType type = ItemType::Float; };
template<> struct ItemTraits<double> { static constexpr ItemType type = ItemType::Double; };

// The C++ types that travel as items of their own (ItemTraits has them).
template<typename T>
concept ItemValue = requires { ItemTraits<T>::type; };

// Whether a payload of `type` may be decoded as C++ type T. Byte/SignedByte
// both decode to qint8 and Short/SignedShort to qint16 (edu.rit.mp has both).
template<typename T>
constexpr bool itemTypeDecodesAs(ItemType type)
{
    if constexpr (std::is_same_v<T, qint8>)
        return type == ItemType::Byte || type == ItemType::SignedByte;
    else if constexpr (std::is_same_v<T, qint16>)
        return type == ItemType::Short || type == ItemType::SignedShort;
    else
        return type == ItemTraits<T>::type;
}

} // namespace mmpi
