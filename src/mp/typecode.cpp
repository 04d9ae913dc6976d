#include <mmpi/mp/typecode.h>

namespace mmpi::mp {

std::optional<ItemType> typeFromCode(quint8 code)
{
    // ItemType uses PJ's numbering; only None (0) is MMPI's own.
    if (code == 0)
        return std::nullopt;
    return itemTypeFromCode(code);
}

int bytesPerItem(quint8 code)
{
    const auto type = typeFromCode(code);
    if (!type)
        return 0;
    return *type == ItemType::Object ? 1 : itemSize(*type);
}

std::optional<quint8> sendCode(ItemType type)
{
    switch (type) {
    case ItemType::None:
    case ItemType::Object:
        return std::nullopt;
    // PJ's ByteBuf, UnsignedByteBuf and UnsignedShortBuf report the wrong code;
    // a PJ receiver expects exactly what a PJ sender sends, so we do the same.
    case ItemType::Byte:
        return quint8(ItemType::Boolean);
    case ItemType::UnsignedByte:
        return quint8(ItemType::SignedByte);
    case ItemType::UnsignedShort:
        return quint8(ItemType::SignedShort);
    default:
        return quint8(type);
    }
}

QString codeName(quint8 code)
{
    const auto type = typeFromCode(code);
    if (!type)
        return QStringLiteral("code %1 (unknown)").arg(code);
    return QStringLiteral("%1 (%2)").arg(itemTypeName(*type)).arg(code);
}

} // namespace mmpi::mp
