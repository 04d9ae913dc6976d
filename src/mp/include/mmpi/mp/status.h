// What a completed receive reports, as PJ's Status does: which channel (by far
// ID) the message came on, its tag and type code, and its real item count N,
// even when only part of it fitted the receive's capacity.
#pragma once

#include <mmpi/mp/typecode.h>

#include <QPointer>

namespace mmpi::mp {

class Channel;

struct Status
{
    // The channel, null once it has been closed and removed from its group.
    QPointer<Channel> channel;
    qint32 farId = 0;
    qint32 tag = 0;
    // The code exactly as it arrived (1 for PJ's bytes, 10/11 for its
    // unsigned items, 9 for a Java object stream).
    quint8 typeCode = 0;
    // N as the sender wrote it (bytes for an object message).
    qint32 count = 0;
    // How many of the N items the receive kept; the rest were read and dropped.
    qint32 kept = 0;

    bool isObject() const { return typeCode == quint8(ItemType::Object); }
    bool wasTruncated() const { return kept < count; }
};

} // namespace mmpi::mp
