#include <mmpi/transport/sealedlink.h>

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>

namespace mmpi {

SealedLink::SealedLink(Link *inner, RecordCipher sender, RecordCipher receiver, QObject *parent)
    : Link(parent)
    , m_inner(inner)
    , m_sender(std::move(sender))
    , m_receiver(std::move(receiver))
    , m_peerAddress(inner->peerAddress())
{
    inner->setParent(this);
    // Direct connections: a record is opened inside the inner link's own
    // delivery, so the frames it carries keep their order with what follows.
    connect(inner, &Link::frameReceived, this, &SealedLink::handleRecord);
    connect(inner, &Link::stateChanged, this, &SealedLink::handleInnerState);
    connect(inner, &Link::bytesWritten, this, &Link::bytesWritten);
    connect(inner, &Link::arrivalRateMeasured, this, &Link::arrivalRateMeasured);
    setState(inner->state());
}

// The inner link is a child and goes with this one.
SealedLink::~SealedLink() = default;

QString SealedLink::peerAddress() const
{
    return m_peerAddress;
}

void SealedLink::sendFrame(const Frame &frame)
{
    if (state() != State::Connected || !m_inner) {
        qCDebug(lcTransport).noquote() << "not sending a frame to" << m_peerAddress << ": the link is" << state();
        return;
    }
    auto record = m_sender.seal(frame);
    if (!record)
        return failWith(record.error());
    m_inner->sendFrame(*record);
    // A stream link has copied the record to its socket by now; one that
    // keeps it shares the buffer, which recycle() then leaves alone.
    BufferPool::recycle(std::move(record->payload));
}

void SealedLink::setReading(bool enabled)
{
    if (m_inner)
        m_inner->setReading(enabled);
}

qint64 SealedLink::bytesToWrite() const
{
    return m_inner ? m_inner->bytesToWrite() : 0;
}

// In the inner link's units (records), as counters() are.
qint64 SealedLink::unsentBytes() const
{
    return m_inner ? m_inner->unsentBytes() : 0;
}

LinkCounters SealedLink::counters() const
{
    return m_inner ? m_inner->counters() : Link::counters();
}

void SealedLink::close()
{
    if (state() == State::Closed)
        return;
    if (Link *inner = m_inner) {
        inner->disconnect(this);
        inner->close();
    }
    setState(State::Closed);
}

void SealedLink::handleRecord(const Frame &record)
{
    if (state() != State::Connected)
        return;
    auto frame = m_receiver.open(record);
    if (!frame)
        return failWith(frame.error());
    Q_EMIT frameReceived(*frame);
    // Taken from BufferPool by open(); whoever kept the frame shares the
    // buffer, which recycle() then leaves alone.
    BufferPool::recycle(std::move(frame->payload));
}

void SealedLink::handleInnerState(Link::State state)
{
    if (state != Link::State::Closed || this->state() == State::Closed)
        return;
    if (m_inner && m_inner->error().isError())
        setError(m_inner->error());
    setState(State::Closed);
}

void SealedLink::failWith(const Error &error)
{
    qCWarning(lcTransport).noquote() << "sealed link" << m_peerAddress << "failed:" << error.toString();
    QPointer<SealedLink> self(this);
    setError(error);
    if (self)
        close();
}

} // namespace mmpi
