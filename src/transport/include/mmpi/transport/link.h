// mmpi::Link: one reliable, ordered stream of frames to one peer. Transports
// create links (connecting or accepting); the world layer authenticates them and
// routes frames. A Link lives in the progress thread and is not thread-safe.
#pragma once

#include <mmpi/core/error.h>
#include <mmpi/wire/frame.h>

#include <QObject>

namespace mmpi {

struct LinkCounters
{
    quint64 bytesSent = 0;   // handed to the operating system
    quint64 bytesQueued = 0; // taken by sendFrame(), as the link encodes them
    quint64 bytesReceived = 0;
    quint64 framesSent = 0;
    quint64 framesReceived = 0;
};

class Link : public QObject
{
    Q_OBJECT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
public:
    enum class State { Connecting, Connected, Closed };
    Q_ENUM(State)

    explicit Link(QObject *parent = nullptr);
    ~Link() override;

    State state() const { return m_state; }
    const Error &error() const { return m_error; }
    QString errorString() const { return m_error.message; }
    virtual LinkCounters counters() const { return m_counters; }

    // Human-readable address of the other end, e.g. "tcp://127.0.0.1:40123".
    virtual QString peerAddress() const = 0;
    // Queue a frame; frames are written in call order. Ignored (with a debug
    // log) when the link is not Connected.
    virtual void sendFrame(const Frame &frame) = 0;
    // Stop (false) or resume reading from the peer: while paused, frames
    // wait in the operating system and the peer's sends slow down once the
    // buffers between fill. A transport that cannot pause keeps delivering.
    virtual void setReading(bool enabled);
    // Bytes queued but not yet handed to the operating system.
    virtual qint64 bytesToWrite() const = 0;
    // Bytes queued that have not left this node: bytesToWrite() and what the
    // kernel holds unsent, where it says (a kernel takes a large write at
    // once and sends it when the radio can, so "handed over" is not "gone").
    // In the units of counters().bytesQueued: everything queued before the
    // last bytesQueued - unsentBytes() bytes has left. Default: bytesToWrite().
    virtual qint64 unsentBytes() const { return bytesToWrite(); }
    // Close the link; state becomes Closed (stateChanged is emitted once).
    virtual void close() = 0;

    // A slot connected to any of these signals may close() the link, which
    // then stops delivering at once. To delete it from such a slot use
    // deleteLater(), never delete: the link is still emitting.
Q_SIGNALS:
    void stateChanged(mmpi::Link::State state);
    void frameReceived(const mmpi::Frame &frame);
    // A link error (I/O error, peer vanished, malformed input). The link closes
    // right after emitting it.
    void errorOccurred(const mmpi::Error &error);
    // Queued bytes were handed to the operating system; bytesToWrite() fell.
    void bytesWritten(qint64 bytes);
    // The peer's frames arrived this fast (bytes per second) while one was
    // in flight: how its radio carries what it sends this way, which only
    // this end sees for a frame of a few packets. Transports that can tell
    // emit it (stream links do); the world reports it to the peer.
    void arrivalRateMeasured(double bytesPerSecond);

protected:
    void setState(State state);
    void setError(const Error &error); // records and emits errorOccurred
    // Not an overload of counters(): through a non-const Link* a protected
    // overload would win and make the public accessor unusable.
    LinkCounters &mutableCounters() { return m_counters; }

private:
    State m_state = State::Connecting;
    Error m_error;
    LinkCounters m_counters;
};

} // namespace mmpi
