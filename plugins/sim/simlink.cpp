#include "simlink.h"

#include "simradio.h"

#include <mmpi/core/logging.h>

namespace mmpi {

SimLink::SimLink(Link *inner, QString peerAddress, SimRadio *radio, QObject *parent)
    : Link(parent), m_inner(inner), m_radio(radio), m_peerAddress(std::move(peerAddress))
{
    if (!inner)
        return;
    m_innerAddress = inner->peerAddress();
    inner->setParent(this);
    connect(inner, &Link::stateChanged, this, &SimLink::handleInnerState);
    connect(inner, &Link::errorOccurred, this, &SimLink::handleInnerError);
    connect(inner, &Link::frameReceived, this, &SimLink::handleInnerFrame);
    connect(inner, &Link::bytesWritten, this, &SimLink::handleInnerBytesWritten);
    if (inner->state() != State::Connecting)
        handleInnerState(inner->state());
}

SimLink *SimLink::refused(QString peerAddress, const Error &error, QObject *parent)
{
    auto *link = new SimLink(nullptr, std::move(peerAddress), nullptr, parent);
    QMetaObject::invokeMethod(link, [link, error] { link->fail(error); }, Qt::QueuedConnection);
    return link;
}

// Frames of a link deleted without close() are of no use to anyone.
SimLink::~SimLink()
{
    if (m_radio && m_inner && m_inner->parent() == this)
        m_radio->drop(m_inner);
}

void SimLink::sendFrame(const Frame &frame)
{
    if (state() != State::Connected || !m_inner) {
        qCDebug(lcTransport).noquote() << "not sending a frame to" << peerAddress() << ": the link is" << state();
        return;
    }
    // Unshaped frames would make a simulation lie; a link without its radio is broken.
    if (!m_radio)
        return fail(Error(ErrorCode::LinkError, QStringLiteral("the sim transport of this link was deleted")));
    if (!m_radio->send(m_inner, frame))
        return fail(Error(ErrorCode::LinkError,
                          QStringLiteral("cannot queue a frame of %1 bytes: the sim radio's transmit queue "
                                         "holds %2 of at most %3 bytes (option queueLimit)")
                              .arg(FrameHeaderSize + frame.payload.size())
                              .arg(m_radio->queuedBytes())
                              .arg(m_radio->queueLimit())));
    ++mutableCounters().framesSent;
    mutableCounters().bytesQueued += quint64(FrameHeaderSize + frame.payload.size());
}

void SimLink::setReading(bool enabled)
{
    if (m_inner)
        m_inner->setReading(enabled);
}

LinkCounters SimLink::counters() const
{
    LinkCounters own = Link::counters();
    if (m_inner) {
        const LinkCounters inner = m_inner->counters();
        own.bytesSent = inner.bytesSent;
        own.bytesReceived = inner.bytesReceived;
        own.framesReceived = inner.framesReceived;
    }
    return own;
}

void SimLink::keepInnerCounters()
{
    const LinkCounters now = counters();
    LinkCounters &kept = mutableCounters();
    kept.bytesSent = now.bytesSent;
    kept.bytesReceived = now.bytesReceived;
    kept.framesReceived = now.framesReceived;
}

// Also unsentBytes(): a frame the simulated radio has let go is on the air,
// whatever the real link under it still holds.
qint64 SimLink::bytesToWrite() const
{
    if (!m_inner)
        return 0;
    return (m_radio ? m_radio->pendingBytes(m_inner) : 0) + m_inner->bytesToWrite();
}

void SimLink::close()
{
    if (state() == State::Closed)
        return;
    if (Link *inner = m_inner) {
        detachInner();
        if (m_radio && m_radio->pendingBytes(inner) > 0)
            m_radio->closeWhenSent(inner);
        else
            inner->close();
    }
    setState(State::Closed);
}

void SimLink::fail(const Error &error)
{
    if (state() == State::Closed)
        return;
    if (Link *inner = m_inner) {
        detachInner();
        if (m_radio)
            m_radio->drop(inner);
        inner->close();
    }
    // A refused connect is routine (callers retry); a broken link is news.
    if (error.code == ErrorCode::ConnectFailed || error.code == ErrorCode::ConnectionRefused)
        qCDebug(lcTransport).noquote() << "link" << peerAddress() << "failed:" << error.toString();
    else
        qCWarning(lcTransport).noquote() << "link" << peerAddress() << "failed:" << error.toString();
    QPointer<SimLink> self(this);
    setError(error);
    if (self)
        close();
}

void SimLink::detachInner()
{
    // Whatever the inner link says from now on is no news to our receivers.
    m_inner->disconnect(this);
    keepInnerCounters();
}

void SimLink::handleInnerState(State state)
{
    if (state == State::Connected && this->state() == State::Connecting) {
        setState(State::Connected);
    } else if (state == State::Closed && this->state() != State::Closed) {
        // Nothing queued can reach a peer that is gone.
        if (m_radio && m_inner)
            m_radio->drop(m_inner);
        setState(State::Closed);
    }
}

void SimLink::handleInnerError(const Error &error)
{
    if (state() == State::Closed)
        return;
    if (m_radio && m_inner)
        m_radio->drop(m_inner);
    // The inner link closes right after; handleInnerState() follows it.
    setError(translated(error));
}

void SimLink::handleInnerFrame(const Frame &frame)
{
    if (state() == State::Connected)
        Q_EMIT frameReceived(frame);
}

void SimLink::handleInnerBytesWritten(qint64 bytes)
{
    Q_EMIT bytesWritten(bytes);
}

Error SimLink::translated(const Error &error) const
{
    Error result = error;
    if (!m_innerAddress.isEmpty())
        result.message.replace(m_innerAddress, m_peerAddress);
    return result;
}

} // namespace mmpi
