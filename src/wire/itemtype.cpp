#include <mmpi/wire/itemtype.h>

namespace mmpi {

int itemSize(ItemType type)
{
    switch (type) {
    case ItemType::Boolean:
    case ItemType::Byte:
    case ItemType::SignedByte:
    case ItemType::UnsignedByte:
        return 1;
    case ItemType::Short:
    case ItemType::SignedShort:
    case ItemType::UnsignedShort:
    case ItemType::Char:
        return 2;
    case ItemType::Int:
    case ItemType::Float:
        return 4;
    case ItemType::Long:
    case ItemType::Double:
        return 8;
    case ItemType::None:
    case ItemType::Object:
        return 0;
    }
    return 0;
}

std::optional<ItemType> itemTypeFromCode(quint8 code)
{
    // The codes are dense (0..13), so a range check is the whole validation.
    if (code > quint8(ItemType::UnsignedShort))
        return std::nullopt;
    return ItemType(code);
}

// Spelled out rather than taken from QMetaEnum so that names in error messages
// never depend on moc output.
QString itemTypeName(ItemType type)
{
    switch (type) {
    case ItemType::None: return QStringLiteral("None");
    case ItemType::Boolean: return QStringLiteral("Boolean");
    case ItemType::Byte: return QStringLiteral("Byte");
    case ItemType::Short: return QStringLiteral("Short");
    case ItemType::Int: return QStringLiteral("Int");
    case ItemType::Long: return QStringLiteral("Long");
    case ItemType::Char: return QStringLiteral("Char");
    case ItemType::Float: return QStringLiteral("Float");
    case ItemType::Double: return QStringLiteral("Double");
    case ItemType::Object: return QStringLiteral("Object");
    case ItemType::SignedByte: return QStringLiteral("SignedByte");
    case ItemType::SignedShort: return QStringLiteral("SignedShort");
    case ItemType::UnsignedByte: return QStringLiteral("UnsignedByte");
    case ItemType::UnsignedShort: return QStringLiteral("UnsignedShort");
    }
    return QStringLiteral("ItemType(%1)").arg(int(type));
}

} // namespace mmpi
