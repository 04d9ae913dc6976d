// What a receive waits for, PJ's matching rules: one channel or any channel of
// the group, a tag range (tag 0 unless told), the exact type code, and how many
// items to keep (PJ's buffer length; the rest of a longer message is dropped).
#pragma once

#include <mmpi/mp/tagrange.h>
#include <mmpi/mp/typecode.h>

#include <limits>
#include <optional>

namespace mmpi::mp {

class Channel;

struct ReceiveSpec
{
    // Null: any channel of the group.
    Channel *channel = nullptr;
    TagRange tags = TagRange::exact(0);
    // The exact code to match; nullopt matches any type (an MMPI extension
    // PJ has no equivalent of; mmpi-mp-echo uses it).
    std::optional<quint8> typeCode;
    // Items to keep (ignored for object messages, which come whole).
    qint32 capacity = std::numeric_limits<qint32>::max();

    // Match what a PJ sender sends for `type` (sendCode(); 9 for Object).
    static ReceiveSpec forType(ItemType type, qint32 capacity = std::numeric_limits<qint32>::max(),
                               TagRange tags = TagRange::exact(0), Channel *channel = nullptr)
    {
        ReceiveSpec spec;
        spec.channel = channel;
        spec.tags = tags;
        spec.typeCode = type == ItemType::Object ? std::optional<quint8>(quint8(ItemType::Object)) : sendCode(type);
        spec.capacity = capacity;
        return spec;
    }
    static ReceiveSpec anyMessage(Channel *channel = nullptr)
    {
        ReceiveSpec spec;
        spec.channel = channel;
        spec.tags = TagRange::any();
        return spec;
    }
};

} // namespace mmpi::mp
