// How collective traffic is told apart from point-to-point traffic: a
// communicator's collectives use its id with the top bit set (its "collective
// context"), and the tag carries the collective's sequence number on that
// communicator, an argument and a frame kind (docs/collectives.md). User code
// cannot address these contexts, so user tags never collide with them.
#pragma once

#include <QtGlobal>

namespace mmpi::detail {

constexpr quint32 CollectiveContextBit = 0x80000000u;
constexpr quint32 MaxCommunicatorId = 0x7ffffffeu;
// Communicator::service(): above every id a communicator can be given.
constexpr quint32 ServiceCommunicatorId = MaxCommunicatorId + 1;

// The tag's fields: sequence number in bits 0-19 (its epoch in 16-19),
// argument in bits 20-29 (a bcast frame's forwarding range length minus one,
// a barrier round), kind in bits 30-31.
constexpr quint32 SequenceBits = 20;
constexpr quint32 SequenceMask = (1u << SequenceBits) - 1;
// A sequence number is an epoch (its top bits) and a count within it. Each
// Communicator::interrupt() begins the next epoch at count 0, on every member
// that interrupts, so the collectives after it never meet the frames of one
// it cut short, whose members' counts may differ. Both wrap: 2^16
// collectives outstanding in an epoch, 16 epochs (the half behind the
// current one is stale, the other half is members that interrupted first).
constexpr quint32 EpochBits = 4;
constexpr quint32 CountBits = SequenceBits - EpochBits;
constexpr quint32 CountMask = (1u << CountBits) - 1;
constexpr quint32 Epochs = 1u << EpochBits;

constexpr quint32 epochOf(quint32 sequence)
{
    return (sequence & SequenceMask) >> CountBits;
}
constexpr quint32 firstOfEpoch(quint32 epoch)
{
    return (epoch % Epochs) << CountBits;
}
constexpr bool isEarlierEpoch(quint32 epoch, quint32 current)
{
    const quint32 behind = (current - epoch) % Epochs;
    return behind != 0 && behind <= Epochs / 2;
}
constexpr int ArgumentBits = 10;
constexpr int MaxArgument = (1 << ArgumentBits) - 1;
// A bcast forwarding range must fit the argument, so groups that run
// collectives have at most this many ranks.
constexpr int MaxCollectiveRanks = MaxArgument + 1;

enum class CollectiveFrameKind : quint8 {
    Data = 0,         // a contribution, a result, or a bcast message or segment
    StreamHeader = 1, // a segmented bcast follows: Long items (item type, count, bytes)
    Revoke = 2,       // the communicator was revoked (sequence 0): an error record and its members
    Abort = 3,        // the sender failed this collective: one Object record (code, message)
};

struct CollectiveTag
{
    quint32 sequence = 0;
    int argument = 0;
    CollectiveFrameKind kind = CollectiveFrameKind::Data;
};

constexpr qint32 encodeCollectiveTag(quint32 sequence, int argument, CollectiveFrameKind kind)
{
    return qint32((sequence & SequenceMask) | (quint32(argument & MaxArgument) << SequenceBits)
                  | (quint32(kind) << 30));
}

constexpr CollectiveTag decodeCollectiveTag(qint32 tag)
{
    const quint32 bits = quint32(tag);
    return {bits & SequenceMask, int((bits >> SequenceBits) & MaxArgument), CollectiveFrameKind((bits >> 30) & 3)};
}

} // namespace mmpi::detail
