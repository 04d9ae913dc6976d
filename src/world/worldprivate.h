// WorldPrivate: World's state, shared by its thread and the progress thread.
// Application threads reach the engine only through `sends` (posting frames)
// and queued calls; everything else here is read-only for them once formed.
#pragma once

#include "failuredetector.h"
#include "peerstream.h"
#include "sendqueue.h"

#include <mmpi/world/world.h>

#include <QHash>
#include <QSet>
#include <QMutex>
#include <QThread>
#include <QUuid>

#include <atomic>

namespace mmpi {

namespace detail { class Engine; }

class WorldPrivate
{
public:
    QThread thread;
    detail::Engine *engine = nullptr;
    std::shared_ptr<detail::SendQueue> sends; // set by form()
    std::atomic<World::State> state{World::State::Idle};
    std::atomic<int> rank{NoRank};
    std::atomic<int> size{0};
    std::atomic<bool> replacement{false};
    const QString nodeId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    mutable QMutex mutex; // guards error and nodes
    Error error;
    QList<NodeInfo> nodes;
    QHash<int, QString> verificationCodes; // guarded by mutex: per peer rank, of its current link
    std::shared_ptr<MessageSink> sink; // guarded by mutex
    QSet<int> openJoinRequests; // guarded by mutex: answerable by confirmJoin()/rejectJoin()
    // Set before the state becomes Formed and fixed after: read without a lock.
    QList<std::shared_ptr<const detail::PeerStream>> streams;
    WorldConfig config; // guarded by mutex
    LinkMedium expectedLink = LinkMedium::wifi(); // guarded by mutex
    // Set by form() before the progress thread starts; thread-safe to query.
    std::shared_ptr<const detail::FailureDetector> detector;

    std::shared_ptr<MessageSink> currentSink() const;
};

} // namespace mmpi
