// detail::CollectiveResult: what one rank's part of a collective produced,
// filled in on the progress thread before the collective's request finishes
// and read (never written) after it. The typed Communicator calls decode it.
#pragma once

#include <mmpi/comm/bcastplan.h>
#include <mmpi/comm/messagecodec.h>

#include <QList>

#include <functional>
#include <memory>
#include <optional>

namespace mmpi::detail {

// A list of the caller's item type, allocated by the typed layer for the
// type-erased one to write into: `list` owns it (a QList<E>), `data` is its items.
struct ListPlace
{
    std::shared_ptr<void> list;
    char *data = nullptr;
};

template<ItemValue E>
ListPlace newListPlace(quint32 count)
{
    auto list = std::make_shared<QList<E>>(uninitializedList<E>(qsizetype(count)));
    return {list, reinterpret_cast<char *>(list->data())};
}

// Where a collective of equal blocks (alltoall, allgather, gather of items)
// may put the blocks it gets: a list of the caller's item type (items whose
// memory is their form in the host's order), block r at r blocks in, read
// there as it arrives instead of into buffers copied into a new list later.
struct ExchangeList
{
    std::function<ListPlace(quint32 count)> newList;
    qsizetype itemBytes = 0;
};

struct CollectiveResult
{
    // A copy shares the buffers, which then go back to the pool only with
    // the last result that holds them.
    CollectiveResult() = default;
    CollectiveResult(const CollectiveResult &) = default;
    CollectiveResult &operator=(const CollectiveResult &) = default;
    // Gives the large buffers nobody else holds back to the BufferPool, so
    // that the next large collective receives and encodes into memory that
    // is already mapped instead of page-faulting on every page of it.
    ~CollectiveResult();

    // bcast, scatter, reduce, allreduce: this rank's value.
    Payload payload;
    // allreduce of a list whose last combine is left to the caller
    // (Combiner::lastCombineToCaller): the result is payload op operand.
    std::optional<Payload> operand;
    // allreduce of a list whose peer's contribution was written into the
    // caller's list type as it arrived (Combiner::newList): the result, a QList<E>.
    std::shared_ptr<void> list;
    // gather (root), allgather, alltoall: one contribution per rank, by rank.
    // A ring allreduce whose assembly is left to the caller: its segments.
    QList<Payload> parts;
    // bcast: the topology this node used for its forwarding range.
    std::optional<BcastPlan> plan;
};

// Decodes every part as T, in rank order; errors name the rank.
template<typename T>
Result<QList<T>> decodeParts(const QList<Payload> &parts);

// Concatenates the parts' items (all of the same type); errors name the rank.
template<ItemValue T>
Result<QList<T>> concatenateParts(const QList<Payload> &parts, bool sameCounts);

// The blocks of an exchange (alltoall, allgather of items) or of a gather
// (at its root) in rank order: the list they were read into
// (ExchangeList), or the parts concatenated.
template<ItemValue T>
Result<QList<T>> exchangedItems(const CollectiveResult &result);

Error partError(int rank, const Error &error);
Error unequalCounts(int rank, quint32 count, quint32 expected);

template<typename T>
Result<QList<T>> decodeParts(const QList<Payload> &parts)
{
    QList<T> out;
    out.reserve(parts.size());
    for (qsizetype r = 0; r < parts.size(); ++r) {
        auto value = MessageCodec<T>::decode(parts.at(r));
        if (!value)
            return partError(int(r), value.error());
        out.append(std::move(*value));
    }
    return out;
}

template<ItemValue T>
Result<QList<T>> concatenateParts(const QList<Payload> &parts, bool sameCounts)
{
    qsizetype total = 0;
    for (qsizetype r = 0; r < parts.size(); ++r) {
        if (sameCounts && parts.at(r).count != parts.first().count)
            return unequalCounts(int(r), parts.at(r).count, parts.first().count);
        total += parts.at(r).count;
    }
    QList<T> out = uninitializedList<T>(total);
    qsizetype at = 0;
    for (qsizetype r = 0; r < parts.size(); ++r) {
        const Payload &p = parts.at(r);
        const auto into = std::span<T>(out.data() + at, p.count);
        if (auto ok = decodeItemsInto<T>(p.itemType, p.count, p.bytes, into, p.order); !ok)
            return partError(int(r), ok.error());
        at += p.count;
    }
    return out;
}

template<ItemValue T>
Result<QList<T>> exchangedItems(const CollectiveResult &result)
{
    if (result.list)
        return *std::static_pointer_cast<const QList<T>>(result.list);
    return concatenateParts<T>(result.parts, true);
}

} // namespace mmpi::detail
