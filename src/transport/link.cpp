#include <mmpi/transport/link.h>

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

} // namespace mmpi
