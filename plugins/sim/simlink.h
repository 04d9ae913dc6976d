// SimLink: a link of the sim transport. It wraps a local-transport link (the real
// socket and codec) and sends every frame through the node's SimRadio; received
// frames pass straight through, since their sender shaped them.
#pragma once

#include <mmpi/transport/link.h>

#include <QPointer>

namespace mmpi {

class SimRadio;

class SimLink : public Link
{
    Q_OBJECT
public:
    // Takes ownership of `inner` (connecting or connected). `peerAddress` is
    // the sim:// form of the inner link's address.
    SimLink(Link *inner, QString peerAddress, SimRadio *radio, QObject *parent = nullptr);
    // A link that never connects: it fails with `error` on the next event-loop
    // turn, like a refused connect, after the caller connected its slots.
    static SimLink *refused(QString peerAddress, const Error &error, QObject *parent = nullptr);
    ~SimLink() override;

    QString peerAddress() const override { return m_peerAddress; }
    void sendFrame(const Frame &frame) override;
    // Never: a frame written from another thread would skip the radio.
    // Pauses the socket underneath, so the peer's sends back up.
    void setReading(bool enabled) override;
    qint64 bytesToWrite() const override;
    // Bytes are counted where they meet the socket, by the inner link; frames
    // sent are counted here, when they are queued, as every Link counts them.
    LinkCounters counters() const override;
    // Frames still in the radio are sent before the socket closes (see
    // SimRadio::closeWhenSent), as StreamLink does with its socket buffer.
    void close() override;

    // Breaks the link at once, as a radio fault does: queued frames are
    // dropped, `error` is reported, then the link closes.
    void fail(const Error &error);

private:
    void handleInnerState(State state);
    void handleInnerError(const Error &error);
    void handleInnerFrame(const Frame &frame);
    void handleInnerBytesWritten(qint64 bytes);
    // Keeps the inner link's byte counts for when it is gone.
    void keepInnerCounters();
    // The inner link's messages name its local:// address; ours is sim://.
    Error translated(const Error &error) const;
    void detachInner();

    QPointer<Link> m_inner;
    QPointer<SimRadio> m_radio;
    QString m_peerAddress;
    QString m_innerAddress;
};

} // namespace mmpi
