// PipeLink: two connected links in memory for tests of what runs over a
// link (the handshake, sealed links). A frame sent on one end arrives at the
// other on a later pass of the event loop, in order, as over a socket; each
// end keeps what it sent. Closing one end closes the other after that.
#pragma once

#include <mmpi/transport/link.h>

#include <QList>
#include <QPointer>

#include <utility>

namespace mmpi::test {

class PipeLink : public Link
{
public:
    // Both ends, children of `parent` (a SealedLink made over one takes it over).
    static std::pair<PipeLink *, PipeLink *> pair(QObject *parent)
    {
        auto *a = new PipeLink(parent);
        auto *b = new PipeLink(parent);
        a->m_peer = b;
        b->m_peer = a;
        return {a, b};
    }

    explicit PipeLink(QObject *parent) : Link(parent) { setState(State::Connected); }
    QString peerAddress() const override { return QStringLiteral("pipe://peer"); }
    void sendFrame(const Frame &frame) override
    {
        if (state() != State::Connected)
            return;
        sent.append(frame);
        QMetaObject::invokeMethod(this, [peer = m_peer, frame] {
            if (peer && peer->state() == State::Connected)
                Q_EMIT peer->frameReceived(frame);
        }, Qt::QueuedConnection);
    }
    qint64 bytesToWrite() const override { return 0; }
    void close() override
    {
        if (state() == State::Closed)
            return;
        setState(State::Closed);
        // After the frames sent before it, as a socket's end comes after its bytes.
        QMetaObject::invokeMethod(this, [peer = m_peer] {
            if (peer)
                peer->close();
        }, Qt::QueuedConnection);
    }

    QList<Frame> sent;

private:
    QPointer<PipeLink> m_peer;
};

} // namespace mmpi::test
