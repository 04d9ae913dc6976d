#include <mmpi/comm/messagelistener.h>

#include "collectives/communicatoraccess.h"
#include "matcher.h"

#include <mmpi/core/logging.h>

namespace mmpi {

namespace {

// Communicator::interrupt() (and revoke()) fail the posted receives.
quint64 failuresOf(const Communicator &comm)
{
    const auto &data = detail::CommunicatorAccess::data(comm);
    return data ? data->matcher->failures(data->id) : 0;
}

} // namespace

MessageListener::MessageListener(const Communicator &comm, QObject *owner, QString name, Handler handler, int tag)
    : m_comm(comm), m_owner(owner), m_name(std::move(name)), m_handler(std::move(handler)), m_tag(tag)
{
    post();
}

MessageListener::~MessageListener()
{
    m_posted.cancel();
}

// The callback runs on the owner's thread, queued: the listener may be gone
// by then (replaced while its owner lives on), which `alive` tells, and
// deliverPending() may have handed its message over already.
void MessageListener::post()
{
    m_failures = failuresOf(m_comm);
    const Request request = m_posted = m_comm.irecv(AnySource, m_tag);
    const quint64 post = ++m_posts;
    request.onFinished(m_owner, [this, post, alive = std::weak_ptr<void>(m_alive)] {
        if (!alive.expired() && post == m_posts)
            deliver(m_posted);
    });
}

// By value: post() replaces m_posted. True if the handler got a message.
// An interrupted receive is posted again: the communicator goes on (after a
// revoke the new one fails at once, and the listener stops then).
bool MessageListener::deliver(Request request)
{
    const auto status = request.wait();
    if (!status && failuresOf(m_comm) != m_failures) {
        qCDebug(lcComm).noquote() << m_name << "listens again after:" << status.error().message;
        post();
        return false;
    }
    if (!status) {
        if (!std::exchange(m_stopped, true))
            qCDebug(lcComm).noquote() << m_name << "stops listening:" << status.error().message;
        return false;
    }
    m_handler(*status, request);
    post();
    return true;
}

int MessageListener::deliverPending()
{
    int delivered = 0;
    while (!m_stopped && m_posted.isFinished())
        delivered += deliver(m_posted) ? 1 : 0;
    return delivered;
}

} // namespace mmpi
