// WorldPrivate: World's state, shared by its thread, the progress thread and
// threads that wait for messages (FrameWaiter), which read links themselves
// and deliver what they read through deliverRead().
#pragma once

#include "directpath.h"
#include "failuredetector.h"

#include <mmpi/world/world.h>

#include <QMutex>
#include <QThread>
#include <QVarLengthArray>
#include <QUuid>

#include <atomic>

namespace mmpi {

namespace detail { class Engine; }

class WorldPrivate
{
public:
    QThread thread;
    detail::Engine *engine = nullptr;
    std::atomic<World::State> state{World::State::Idle};
    std::atomic<int> rank{NoRank};
    std::atomic<int> size{0};
    std::atomic<bool> replacement{false};
    const QString nodeId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    mutable QMutex mutex; // guards error and nodes
    Error error;
    QList<NodeInfo> nodes;
    std::shared_ptr<MessageSink> sink; // guarded by mutex
    // Set before the state becomes Formed and fixed after: read without a lock.
    QList<std::shared_ptr<detail::DirectPath>> paths;
    int chunkSize = 0;
    std::chrono::microseconds waitSpin{0};
    std::chrono::microseconds waitSpinMax{0};
    WorldConfig config; // guarded by mutex
    LinkMedium expectedLink = LinkMedium::wifi(); // guarded by mutex
    // Set by form() before the progress thread starts; thread-safe to query.
    std::shared_ptr<const detail::FailureDetector> detector;

    // For FrameWaiter, from any thread once formed. The paths (with their
    // readers) of `source`, or of every peer if it is negative.
    // On the stack for a world of up to 16: a waiting thread asks for every message.
    using PathList = QVarLengthArray<std::pair<int, std::shared_ptr<detail::DirectPath>>, 16>;
    PathList pathsFrom(int source) const;
    // A frame a waiting thread read from `rank`'s link: straight to the sink
    // when it can take it there and nothing of the peer waits in the engine,
    // else to the engine, in order. True if it was delivered here.
    bool deliverRead(int rank, const std::shared_ptr<detail::DirectPath> &path, Frame &&frame);
    // Where the payload of a Data or Fragment frame a waiting thread is
    // reading from `rank` can go straight (a posted receive's buffer, the
    // message in progress), under the same conditions as deliverRead() hands
    // it to the sink; else nullptr.
    char *placeRead(int rank, detail::DirectPath &path, const FrameHeader &header);
    // The sink, if it takes this frame from `rank` on the reading thread:
    // a Data frame from the peer, for this node, nothing of the peer
    // waiting in the engine, and the sink accepting it from any thread.
    std::shared_ptr<MessageSink> sinkTakingHere(int rank, const detail::DirectPath &path,
                                                const FrameHeader &header) const;
    std::shared_ptr<MessageSink> currentSink() const;

private:
    static FrameHeader messageHeader(const FrameHeader &header);
    static detail::MessagePlacement placementOf(MessageSink &sink);
    bool assembleRead(int rank, detail::DirectPath &path, MessageSink &sink, const Frame &fragment);
};


} // namespace mmpi
