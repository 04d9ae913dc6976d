// One edu.rit.mp message as it travelled: tag, the type code exactly as sent,
// N, and the items still in their big-endian wire form. For Object (code 9)
// `items` is one opaque Java serialization stream of N bytes.
#pragma once

#include <mmpi/mp/typecode.h>

#include <QByteArray>

namespace mmpi::mp {

struct Message
{
    qint32 tag = 0;
    quint8 typeCode = 0;
    qint32 count = 0;
    QByteArray items;

    bool isObject() const { return typeCode == quint8(ItemType::Object); }
    bool operator==(const Message &) const = default;
};

} // namespace mmpi::mp
