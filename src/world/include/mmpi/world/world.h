// mmpi::World: this node's membership in a world. form() joins or builds the
// world (launched by mmpirun or by discovery), then frames flow to and from
// every rank over a full mesh of authenticated links. The engine runs on its own
// progress thread (brief §4.1); World lives in the caller's thread, its signals
// arrive there, and sendFrame() may be called from any thread.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>
#include <mmpi/world/worldconfig.h>

#include <QList>
#include <QObject>

#include <functional>
#include <memory>

namespace mmpi {

struct NodeInfo
{
    int rank = NoRank;
    QString nodeId;
    QString address; // where the node listens
    bool operator==(const NodeInfo &) const = default;
};

class WorldPrivate;
namespace detail { class Engine; }

// Receives this node's Data frames and peer departures on the progress thread,
// before any signal, so that a thread blocked waiting for a message still
// hears of it (the communicator layer's matcher implements this). Must be
// thread-safe with respect to the caller's own use of it.
class MessageSink
{
public:
    virtual ~MessageSink();
    virtual void handleFrame(const Frame &frame) = 0;
    // The peer left (goodbye) or was lost; no more frames come from it.
    virtual void handlePeerGone(int rank, const Error &reason) = 0;
};

// Runs once a frame handed to sendFrame() is on its way to the operating
// system (NoError), or will never be (the link is gone). It runs on the
// progress thread, or at once on the sender's thread when that thread could
// write the frame itself.
using SendCompletion = std::function<void(const Error &)>;

class World : public QObject
{
    Q_OBJECT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(int rank READ rank NOTIFY formed)
    Q_PROPERTY(int size READ size NOTIFY formed)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorOccurred)
public:
    enum class State {
        Idle,    // not yet asked to form
        Forming, // finding nodes, authenticating, building the mesh
        Formed,  // every rank is linked to every other; frames flow
        Closing, // saying goodbye to the peers
        Closed,  // left the world cleanly
        Failed,  // formation failed; error() says why
    };
    Q_ENUM(State)

    explicit World(QObject *parent = nullptr);
    ~World() override;

    // Start forming. Progress arrives as formationProgress(); the outcome as
    // formed() or errorOccurred() with state Failed. Calling form() twice is a
    // BadConfiguration error.
    void form(const WorldConfig &config);
    // Leave the world: say goodbye to every peer, wait (up to the configured
    // close timeout) for theirs, then close. stateChanged(Closed) when done.
    void close();

    State state() const;
    int rank() const; // NoRank until formed
    int size() const; // 0 until formed
    Error error() const;
    QString errorString() const;
    // This node's identity for this run and where it listens.
    QString nodeId() const;
    // Every node of the formed world, by rank.
    QList<NodeInfo> nodes() const;

    // Send a frame to `destination` (which may be this node). Source and
    // destination are filled in. Thread-safe. Errors: NotFormed, InvalidRank.
    // Frames to one peer keep their order per (communicator, tag); a message
    // larger than WorldConfig::chunkSize travels in chunks that smaller
    // frames may overtake. `done` (optional) reports when the frame has left.
    Result<void> sendFrame(int destination, Frame frame, SendCompletion done = {});

    // Flow control for receivers (thread-safe): stop or resume reading frames
    // from `rank`'s link. While paused, the peer's frames wait in its socket
    // and its sends slow down once the buffers between are full.
    void setReceiving(int rank, bool enabled);
    // The configuration given to form().
    WorldConfig config() const;

    // Route Data frames to `sink` (on the progress thread) instead of the
    // frameReceived() signal. Set it before form(); nullptr restores the signal.
    void setMessageSink(std::shared_ptr<MessageSink> sink);
    std::shared_ptr<MessageSink> messageSink() const;

    // Wait (running a local event loop) until the world is formed or failed.
    // Not on the GUI thread of an interactive app; tools and tests only.
    Result<void> waitForFormed();

Q_SIGNALS:
    void stateChanged(mmpi::World::State state);
    void formationProgress(int joined, int expected);
    void formed();
    void errorOccurred(const mmpi::Error &error);
    // A peer was refused (wrong key, bad claim, malformed input).
    void peerRefused(const QString &peer, const mmpi::Error &reason);
    // A Data frame for this node (when no MessageSink is set).
    void frameReceived(const mmpi::Frame &frame);
    // A peer said goodbye (its app is ending cleanly).
    void nodeLeft(int rank);
    // A peer's link broke without a goodbye.
    void nodeLost(int rank, const mmpi::Error &reason);

private:
    void handleEngineState(State state);
    void connectEngineTraffic(detail::Engine *engine);
    Result<void> queueFrame(int destination, Frame frame, SendCompletion done);

    std::unique_ptr<WorldPrivate> d;
};

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::NodeInfo)
