// mmpi::Communicator: a group of ranks that exchange messages, with MPI's
// (mpi4py's) names: send, recv, isend, irecv, sendrecv, probe, iprobe, the
// collectives (barrier, bcast, scatter(v), gather(v), reduce, allreduce,
// allgather, alltoall) and dup/split. A cheap value handle; copies talk
// through the same matching state. The world communicator comes from
// Communicator::world(world). Thread-safe; collectives on one communicator
// must be called in the same order on every rank (docs/collectives.md).
#pragma once

#include <mmpi/comm/allreduceoptions.h>
#include <mmpi/comm/bcastplan.h>
#include <mmpi/comm/collectiveresult.h>
#include <mmpi/comm/operation.h>
#include <mmpi/comm/reduceop.h>
#include <mmpi/comm/request.h>
#include <mmpi/comm/status.h>

#include <memory>

namespace mmpi {

class World;
class Intercommunicator;
namespace detail {
struct CommunicatorData;
struct CommunicatorAccess;
} // namespace detail

// split(): the color of a rank that joins none of the new communicators.
constexpr int Undefined = -32766;

// Communicator::revoke(): whether the other members hear of it.
enum class RevokeScope {
    AllMembers, // every member revokes it too, as with ULFM's MPI_Comm_revoke
    ThisNode,   // only here: each member revokes its own copy when it decides to
};

class Communicator
{
public:
    Communicator() = default; // null: every call fails with NotFormed

    // The communicator of all ranks of `world`, which must outlive it. The
    // first call routes the world's Data frames to MMPI, so make it before
    // form(): frames that arrive earlier would go to frameReceived().
    static Result<Communicator> world(World &world);
    // MMPI's own channel over every rank of `world` (made the same way as
    // world()), for protocols that must reach a node before it shares any
    // other communicator with the rest: FaultTolerance welcomes a rebuilt
    // rank here (tag 1), the QML World tells it where its channels are (tag
    // 2). Its id is reserved (no dup(), split() or createGroup() gets it);
    // apps should not use it.
    static Result<Communicator> service(World &world);

    bool isNull() const { return !m_data; }
    // The world it belongs to (nullptr for a null communicator).
    World *world() const;
    int rank() const;
    int size() const;
    quint32 id() const;
    // The world rank of each rank of this communicator, by rank.
    QList<int> group() const;
    // Rank translation; NoRank when there is no such rank or member.
    int worldRank(int rank) const;
    int rankOfWorldRank(int worldRank) const;
    // Whether this is an Intercommunicator (point-to-point to a remote group).
    bool isInter() const;

    // ---- point to point (ranks are this communicator's; for an
    // intercommunicator, destinations and sources are remote ranks)

    // Non-blocking send of `data` (see MessageCodec for what T may be). The
    // request finishes once the message is on its way: with large messages or
    // a slow peer that is flow control, and it is when the buffer may be reused.
    // Items whose memory is their wire form (every fixed-size type but bool)
    // are written from where they lie when the message leaves at once, and
    // copied after that only to be kept for a resend; a QList is not copied
    // at all: the message shares it (a later change to it detaches the list).
    template<typename T>
    Request isend(int destination, int tag, const T &data) const
    {
        if constexpr (requires { MessageCodec<T>::view(data); })
            return isendPayload(destination, tag, MessageCodec<T>::view(data));
        else
            return isendPayload(destination, tag, MessageCodec<T>::encode(data));
    }
    template<ItemValue T>
    Request isend(int destination, int tag, std::span<const T> items) const
    {
        return isendPayload(destination, tag, MessageCodec<std::span<const T>>::view(items));
    }
    // Post a receive; the message is read with request.value<T>().
    Request irecv(int source = AnySource, int tag = AnyTag) const;
    // MPI_Irecv: post a receive into `buffer`, which must stay valid (and
    // untouched) until the request finishes. Then the items are there, and
    // wait() gives the status (TruncatedPayload if they did not fit). A large
    // message is written there as it arrives, with no copy in between.
    template<ItemValue T>
    Request irecv(std::span<T> buffer, int source = AnySource, int tag = AnyTag) const
    {
        Request request = irecv(source, tag);
        request.offerPlace(buffer, true);
        return request;
    }

    template<typename T>
    Operation<void> send(int destination, int tag, const T &data) const
    {
        return sendOperation(isend(destination, tag, data));
    }
    template<ItemValue T>
    Operation<void> send(int destination, int tag, std::span<const T> items) const
    {
        return sendOperation(isend(destination, tag, items));
    }

    // Receive one message as T: QList<int>, QString, double, a QDataStream type...
    template<typename T>
    Operation<T> recv(int source = AnySource, int tag = AnyTag) const
    {
        return Operation<T>(irecv(source, tag), [](const Request &r) { return r.value<T>(); });
    }
    // Receive a run of items into `buffer` (MPI style); a message with more
    // items than fit is a TruncatedPayload error. The buffer must outlive it.
    template<ItemValue T>
    Operation<Status> recv(std::span<T> buffer, int source = AnySource, int tag = AnyTag) const
    {
        return Operation<Status>(irecv(source, tag), [buffer](const Request &r) { return r.valueInto(buffer); });
    }

    // Send to one rank and receive from another at once (deadlock-free ring shifts).
    template<typename R, typename T>
    Operation<R> sendrecv(int destination, int sendTag, const T &data, int source = AnySource,
                          int recvTag = AnyTag) const
    {
        const Request sent = isend(destination, sendTag, data);
        return Operation<R>(irecv(source, recvTag), [sent](const Request &r) -> Result<R> {
            if (auto ok = sent.wait(); !ok)
                return ok.error();
            return r.value<R>();
        });
    }

    // Status of the oldest matching message, waiting for one (blocking).
    Result<Status> probe(int source = AnySource, int tag = AnyTag) const;
    // Same without waiting: nullopt if none has arrived.
    std::optional<Status> iprobe(int source = AnySource, int tag = AnyTag) const;
    // Payload bytes held for receives and collectives not yet posted.
    qint64 unexpectedBytes() const;

    // ---- collectives (docs/collectives.md). Every rank calls them in the same
    // order; they start at once and finish on the progress thread, so a rank
    // forwards for others even while its application is busy. Items are
    // those of point-to-point: single items, QList/std::span of items,
    // QString, QByteArray, and (where a call takes a value) any MessageCodec type.

    // Returns once every rank has entered.
    Operation<void> barrier() const;

    // The root's value on every rank (the others' `value` is ignored).
    template<detail::WholeValue T>
    Operation<T> bcast(const T &value, int root, BcastOptions options = {}) const
    {
        const Started s = startBcast(rank() == root ? MessageCodec<T>::encode(value) : Payload{}, root, options);
        return collective<T>(s, [](const detail::CollectiveResult &r) { return MessageCodec<T>::decode(r.payload); });
    }
    template<ItemValue T>
    Operation<QList<T>> bcast(std::span<const T> items, int root, BcastOptions options = {}) const
    {
        const Started s = startBcast(rank() == root ? MessageCodec<std::span<const T>>::encode(items) : Payload{},
                                     root, options);
        return collective<QList<T>>(
            s, [](const detail::CollectiveResult &r) { return MessageCodec<QList<T>>::decode(r.payload); });
    }
    // The link model and the plans behind bcast()'s choices: mmpi/comm/tuning.h;
    // MMPI_BCAST_ALGORITHM forces a topology where `options` do not.

    // Rank r gets perRank[r] of the root's list (size() values of any
    // MessageCodec type); the others' list is ignored.
    template<typename T>
    Operation<T> scatter(const QList<T> &perRank, int root) const
    {
        Result<QList<Payload>> parts = QList<Payload>();
        if (rank() == root)
            parts = perRankParts(perRank);
        return collective<T>(startScatter(std::move(parts), root),
                             [](const detail::CollectiveResult &r) { return MessageCodec<T>::decode(r.payload); });
    }
    // The root's items in size() equal blocks, block r to rank r.
    template<ItemValue T>
    Operation<QList<T>> scatter(std::span<const T> items, int root) const
    {
        Result<QList<Payload>> parts = QList<Payload>();
        if (rank() == root)
            parts = blockParts(items, {});
        return collective<QList<T>>(startScatter(std::move(parts), root), decodeList<T>());
    }
    // The root's items in blocks of counts[r] items, block r to rank r.
    template<ItemValue T>
    Operation<QList<T>> scatterv(std::span<const T> items, const QList<int> &counts, int root) const
    {
        Result<QList<Payload>> parts = QList<Payload>();
        if (rank() == root)
            parts = blockParts(items, counts);
        return collective<QList<T>>(startScatter(std::move(parts), root), decodeList<T>());
    }

    // The root gets every rank's value, by rank; the others an empty list.
    template<detail::WholeValue T>
    Operation<QList<T>> gather(const T &value, int root) const
    {
        return collective<QList<T>>(startGather(MessageCodec<T>::encode(value), root),
                                    [](const detail::CollectiveResult &r) { return detail::decodeParts<T>(r.parts); });
    }
    // The root gets every rank's items concatenated in rank order; every
    // rank must send as many (else CountMismatch at the root).
    template<ItemValue T>
    Operation<QList<T>> gather(std::span<const T> items, int root) const
    {
        return collective<QList<T>>(startGather(MessageCodec<std::span<const T>>::encode(items), root,
                                                rank() == root ? exchangeList<T>() : detail::ExchangeList{}),
                                    &detail::exchangedItems<T>);
    }
    // Like gather(), with any number of items per rank: the root gets one list per rank.
    template<ItemValue T>
    Operation<QList<QList<T>>> gatherv(std::span<const T> items, int root) const
    {
        return collective<QList<QList<T>>>(startGather(MessageCodec<std::span<const T>>::encode(items), root),
                                           [](const detail::CollectiveResult &r) {
                                               return detail::decodeParts<QList<T>>(r.parts);
                                           });
    }

    // value(0) op value(1) op ... at the root (element by element for lists);
    // the others get T{}. A non-commutative op combines in rank order.
    template<detail::WholeValue T>
    Operation<T> reduce(const T &value, ReduceOp<ElementOf<T>> op, int root) const
    {
        const bool isRoot = rank() == root;
        return collective<T>(startReduce(MessageCodec<T>::encode(value), combiner<T>(op), root),
                             [isRoot](const detail::CollectiveResult &r) -> Result<T> {
                                 return isRoot ? MessageCodec<T>::decode(r.payload) : Result<T>(T{});
                             });
    }
    template<ItemValue T>
    Operation<QList<T>> reduce(std::span<const T> items, std::type_identity_t<ReduceOp<T>> op, int root) const
    {
        const bool isRoot = rank() == root;
        return collective<QList<T>>(
            startReduce(MessageCodec<std::span<const T>>::encode(items), combiner<QList<T>>(op), root),
            [isRoot](const detail::CollectiveResult &r) -> Result<QList<T>> {
                return isRoot ? MessageCodec<QList<T>>::decode(r.payload) : Result<QList<T>>(QList<T>{});
            });
    }
    // reduce() whose result every rank gets. `options` may force an
    // algorithm, the same on every rank (else the call fails everywhere);
    // MMPI_ALLREDUCE_ALGORITHM forces one where they do not. What ran:
    // lastAllreduceAlgorithm() in mmpi/comm/tuning.h.
    template<detail::WholeValue T>
    Operation<T> allreduce(const T &value, ReduceOp<ElementOf<T>> op, AllreduceOptions options = {}) const
    {
        if constexpr (std::is_same_v<T, QList<ElementOf<T>>> && ItemValue<ElementOf<T>>)
            return allreduceItems<ElementOf<T>>(MessageCodec<T>::view(value), op, options); // shared, not copied
        else
            return collective<T>(startAllreduce(MessageCodec<T>::encode(value), combiner<T>(op), options),
                                 [](const detail::CollectiveResult &r) { return MessageCodec<T>::decode(r.payload); });
    }
    template<ItemValue T>
    Operation<QList<T>> allreduce(std::span<const T> items, std::type_identity_t<ReduceOp<T>> op,
                                  AllreduceOptions options = {}) const
    {
        return allreduceItems<T>(MessageCodec<std::span<const T>>::encode(items), op, options);
    }

    // Every rank gets every rank's value, by rank.
    template<detail::WholeValue T>
    Operation<QList<T>> allgather(const T &value) const
    {
        return collective<QList<T>>(startExchange(QList<Payload>{MessageCodec<T>::encode(value)}),
                                    [](const detail::CollectiveResult &r) { return detail::decodeParts<T>(r.parts); });
    }
    // Every rank gets every rank's items concatenated (equal counts).
    template<ItemValue T>
    Operation<QList<T>> allgather(std::span<const T> items) const
    {
        return collective<QList<T>>(startExchange(QList<Payload>{MessageCodec<std::span<const T>>::view(items)},
                                                  exchangeList<T>()),
                                    &detail::exchangedItems<T>);
    }

    // Rank r sends perRank[d] to rank d and gets what every rank sent it, by rank.
    template<typename T>
    Operation<QList<T>> alltoall(const QList<T> &perRank) const
    {
        return collective<QList<T>>(startExchange(perRankParts(perRank)),
                                    [](const detail::CollectiveResult &r) { return detail::decodeParts<T>(r.parts); });
    }
    // The items in size() equal blocks, block d to rank d; the result is the
    // blocks received, concatenated in rank order.
    // Byte blocks are sent from `items` itself as isend() sends them.
    template<ItemValue T>
    Operation<QList<T>> alltoall(std::span<const T> items) const
    {
        return collective<QList<T>>(startExchange(blockParts(items, {}, true), exchangeList<T>()),
                                    &detail::exchangedItems<T>);
    }

    // A communicator of the same group with its own matching (collective).
    Operation<Communicator> dup() const;
    // Ranks with the same color form a communicator, ordered by key then by
    // rank here; color Undefined gives a null communicator (collective).
    Operation<Communicator> split(int color, int key = 0) const;

    // For protocols that agree on a new communicator themselves (the fault
    // tolerance layer's shrink, after a failure, when no collective can run):
    // an id no communicator this node knows uses; the largest of every
    // member's is one none of them uses.
    quint32 unusedId() const;
    // The communicator of `ranks` (ranks of this one, in the new order, this
    // node among them) with `id`. Not collective: every member must pass the
    // same ranks and id, agreed beforehand. It is local, so a revoked
    // communicator makes one too (the survivors' next, after a failure).
    // Errors: NotFormed, InvalidRank, BadConfiguration (no id left, this
    // node missing, a rank twice).
    Result<Communicator> createGroup(const QList<int> &ranks, quint32 id) const;
    // Revoke this communicator (every copy of it): every later operation on
    // it fails with `reason` (code Revoked), and so do the receives posted
    // and the collectives running on it. With AllMembers every other member
    // gets a notice and revokes it too, passing the notice on, so a member
    // blocked in a receive from a rank that has given up on the communicator
    // is woken with the error. Only the first revoke counts. FaultTolerance
    // revokes the old communicator after SHRINK and REBUILD.
    void revoke(const Error &reason, RevokeScope scope = RevokeScope::AllMembers) const;
    // Why it was revoked, if it was.
    std::optional<Error> revoked() const;

    // ---- interrupt: wake what waits on this communicator without revoking
    // it (FaultTolerance, when the world reconfigures and the app goes on
    // using the communicator, as under BLANK).

    // On this node only, every receive posted on this communicator (any
    // source and tag; blocking, non-blocking or awaited), every blocking
    // probe and every collective under way on it finish at once with
    // `reason`, its code as given (Reconfigured). Sends are left alone, and
    // so is a receive matched to a large message already arriving into its
    // buffer. Operations started afterwards run normally, and no message is
    // lost: one that had arrived unreceived, or comes later, goes to a later
    // receive; a MessageListener posts again. Thread-safe, from any thread.
    //
    // Collectives: their frames are matched by sequence number, which the
    // members count alike only while they call the same collectives, and an
    // interrupted one may have finished on other members or never started
    // there, with its frames still in flight. So each interrupt() begins a
    // new epoch of sequence numbers here (the next collective takes the
    // first of the next epoch), and frames of earlier epochs are dropped
    // wherever they arrive once their receiver has interrupted. What holds:
    //  - a collective started after interrupt() never takes the frames of
    //    one it interrupted, here or on other members;
    //  - the other members still in an interrupted collective are told, and
    //    fail it with the code of `reason` instead of waiting for this one;
    //  - later collectives meet across members once every member has
    //    interrupted as many times, between the same collectives (as
    //    FaultTolerance does on every survivor when it reconfigures); a
    //    member that interrupts first may start them: their frames wait for
    //    the others, which take them once they have interrupted too.
    // Epochs wrap after 16 interrupts, and an epoch's numbers after 2^16
    // collectives outstanding.
    void interrupt(const Error &reason) const;
    // Messages that arrived at this node, on any communicator of its world,
    // that no receive has taken yet.
    qsizetype unexpectedMessages() const;

private:
    friend struct detail::CommunicatorAccess;
    friend class Intercommunicator;
    using Data = detail::CommunicatorData;
    struct Started
    {
        Request request;
        std::shared_ptr<const detail::CollectiveResult> result;
    };

    explicit Communicator(std::shared_ptr<const Data> data);
    // A borrowed payload (a view of the caller's items) is copied before this
    // returns if the world keeps it.
    Request isendPayload(int destination, int tag, Payload payload) const;
    static Operation<void> sendOperation(Request request);
    static Request failed(Error error);

    Started startBcast(Payload payload, int root, const BcastOptions &options) const;
    Started startScatter(Result<QList<Payload>> parts, int root) const;
    // `into` (the root's): where equal blocks of items may be read to.
    Started startGather(Payload payload, int root, detail::ExchangeList into = {}) const;
    Started startReduce(Payload payload, Result<detail::Combiner> combiner, int root) const;
    Started startAllreduce(Payload payload, Result<detail::Combiner> combiner, AllreduceOptions options) const;
    // allreduce() of a list of items, whose result the caller decodes itself
    // (`items` may view memory its owner keeps: Payload::owner).
    template<ItemValue T>
    Operation<QList<T>> allreduceItems(Payload items, ReduceOp<T> op, AllreduceOptions options) const
    {
        auto combine = combiner<QList<T>>(op);
        if (combine) {
            combine->lastCombineToCaller = true;
            if constexpr (memoryIsItemForm<T>(HostItemOrder))
                combine->newList = &detail::newListPlace<T>;
        }
        return collective<QList<T>>(startAllreduce(std::move(items), std::move(combine), options),
                                    [op](const detail::CollectiveResult &r) -> Result<QList<T>> {
                                        if (r.list)
                                            return *std::static_pointer_cast<const QList<T>>(r.list);
                                        if (r.operand)
                                            return detail::combineIntoList<T>(op, r.payload, *r.operand);
                                        if (!r.parts.isEmpty())
                                            return detail::concatenateParts<T>(r.parts, false);
                                        return MessageCodec<QList<T>>::decode(r.payload);
                                    });
    }
    // `into`: where equal blocks of items may be read to (their list).
    Started startExchange(Result<QList<Payload>> parts, detail::ExchangeList into = {}) const;
    template<ItemValue T>
    static detail::ExchangeList exchangeList()
    {
        if constexpr (memoryIsItemForm<T>(HostItemOrder))
            return {&detail::newListPlace<T>, qsizetype(sizeof(T))};
        return {};
    }
    static Error countError(const QString &what);

    template<typename R, typename F>
    static Operation<R> collective(const Started &s, F decode)
    {
        return Operation<R>(s.request, [result = s.result, decode](const Request &r) -> Result<R> {
            if (auto ok = r.wait(); !ok)
                return ok.error();
            return decode(*result);
        });
    }
    template<ItemValue T>
    static auto decodeList()
    {
        return [](const detail::CollectiveResult &r) { return MessageCodec<QList<T>>::decode(r.payload); };
    }
    template<typename T>
    static Result<detail::Combiner> combiner(const ReduceOp<ElementOf<T>> &op)
    {
        if (auto ok = op.check(); !ok)
            return ok.error();
        return detail::makeCombiner<T>(op);
    }
    template<typename T>
    Result<QList<Payload>> perRankParts(const QList<T> &perRank) const
    {
        if (perRank.size() != size())
            return countError(QStringLiteral("%1 values for %2 ranks").arg(perRank.size()).arg(size()));
        QList<Payload> parts;
        parts.reserve(perRank.size());
        for (const T &value : perRank)
            parts.append(MessageCodec<T>::encode(value));
        return parts;
    }
    // `counts` empty: size() equal blocks. `views`: blocks may be views of
    // `items` (viewOrEncodeItems(): all fixed-size types but bool), for an
    // exchange that sends or copies them all before it returns.
    template<ItemValue T>
    Result<QList<Payload>> blockParts(std::span<const T> items, const QList<int> &counts, bool views = false) const
    {
        const qsizetype n = size();
        if (n <= 0)
            return countError(QStringLiteral("the communicator has no ranks"));
        QList<qsizetype> blocks;
        if (counts.isEmpty()) {
            if (qsizetype(items.size()) % n != 0)
                return countError(QStringLiteral("%1 items do not split into %2 equal blocks").arg(items.size()).arg(n));
            blocks = QList<qsizetype>(n, qsizetype(items.size()) / n);
        } else {
            if (counts.size() != n)
                return countError(QStringLiteral("%1 counts for %2 ranks").arg(counts.size()).arg(n));
            qsizetype total = 0;
            for (int c : counts) {
                if (c < 0)
                    return countError(QStringLiteral("a negative count (%1)").arg(c));
                total += c;
                blocks.append(c);
            }
            if (total != qsizetype(items.size()))
                return countError(QStringLiteral("the counts add up to %1, not to the %2 items").arg(total).arg(items.size()));
        }
        QList<Payload> parts;
        qsizetype at = 0;
        for (qsizetype b : blocks) {
            const auto block = items.subspan(size_t(at), size_t(b));
            parts.append(views ? MessageCodec<std::span<const T>>::view(block)
                               : MessageCodec<std::span<const T>>::encode(block));
            at += b;
        }
        return parts;
    }

    std::shared_ptr<const Data> m_data;
};

} // namespace mmpi
