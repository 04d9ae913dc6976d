// What a receive or probe learned about a message: who sent it, with which
// tag, and what it carries. AnySource and AnyTag are the wildcards of a
// receive (MPI's MPI_ANY_SOURCE / MPI_ANY_TAG).
#pragma once

#include <mmpi/wire/itemtype.h>

namespace mmpi {

constexpr int AnySource = -2;
constexpr int AnyTag = -1;
// User tags are 0..MaxTag; negative tags belong to MMPI (collectives).
constexpr int MaxTag = 0x7fffffff;

struct Status
{
    int source = AnySource;
    int tag = AnyTag;
    ItemType itemType = ItemType::None;
    quint32 count = 0;      // items in the message
    qint64 bytes = 0;       // payload bytes on the wire
    bool operator==(const Status &) const = default;
};

} // namespace mmpi
