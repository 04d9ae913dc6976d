// mmpi::Communicator: a group of ranks that exchange messages, with MPI's
// (mpi4py's) names: send, recv, isend, irecv, sendrecv, probe, iprobe. A cheap
// value handle; copies talk through the same matching state. The world
// communicator comes from Communicator::world(world). Thread-safe.
#pragma once

#include <mmpi/comm/operation.h>
#include <mmpi/comm/request.h>
#include <mmpi/comm/status.h>

#include <memory>

namespace mmpi {

class World;
namespace detail { class Matcher; }

class Communicator
{
public:
    Communicator() = default; // null: every call fails with NotFormed

    // The communicator of all ranks of `world`, which must outlive it. The
    // first call routes the world's Data frames to MMPI's matcher, so make it
    // before form(): frames that arrive earlier would go to frameReceived().
    static Result<Communicator> world(World &world);

    bool isNull() const { return !m_data; }
    int rank() const;
    int size() const;
    quint32 id() const;

    // Non-blocking send of `data` (see MessageCodec for what T may be). The
    // request finishes once the message is on its way: with large messages or
    // a slow peer that is flow control, and it is when the buffer may be reused.
    template<typename T>
    Request isend(int destination, int tag, const T &data) const
    {
        return isendPayload(destination, tag, MessageCodec<T>::encode(data));
    }
    template<ItemValue T>
    Request isend(int destination, int tag, std::span<const T> items) const
    {
        return isendPayload(destination, tag, MessageCodec<std::span<const T>>::encode(items));
    }
    // Post a receive; the message is read with request.value<T>().
    Request irecv(int source = AnySource, int tag = AnyTag) const;

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
    // Payload bytes held for receives not yet posted.
    qint64 unexpectedBytes() const;

private:
    struct Data;
    explicit Communicator(std::shared_ptr<const Data> data);
    Request isendPayload(int destination, int tag, Payload payload) const;
    static Operation<void> sendOperation(Request request);
    static Request failed(Error error);

    std::shared_ptr<const Data> m_data;
};

} // namespace mmpi
