#include <mmpi/transport/link.h>
#include <mmpi/transport/linkreader.h>

namespace mmpi {

Link::Link(QObject *parent)
    : QObject(parent)
{
    // Links live in the progress thread; queued connections to the caller's
    // thread need these registered by name as well as by type.
    qRegisterMetaType<mmpi::Frame>();
    qRegisterMetaType<mmpi::Error>();
    qRegisterMetaType<mmpi::Link::State>();
}

Link::~Link() = default;

void Link::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void Link::setError(const Error &error)
{
    m_error = error;
    Q_EMIT errorOccurred(error);
}

void Link::setReading(bool)
{
}

std::shared_ptr<LinkReader> Link::reader() const
{
    return nullptr;
}

bool Link::trySendNow(const Frame &, qint64)
{
    return false;
}

} // namespace mmpi
