#include <mmpi/comm/messagelistener.h>

#include <mmpi/core/logging.h>

namespace mmpi {

MessageListener::MessageListener(const Communicator &comm, QObject *owner, QString name, Handler handler)
    : m_comm(comm), m_owner(owner), m_name(std::move(name)), m_handler(std::move(handler))
{
    post();
}

MessageListener::~MessageListener()
{
    m_posted.cancel();
}

// The callback runs on the owner's thread, queued: the listener may be gone
// by then (replaced while its owner lives on), which `alive` tells.
void MessageListener::post()
{
    const Request request = m_posted = m_comm.irecv(AnySource, AnyTag);
    request.onFinished(m_owner, [this, request, alive = std::weak_ptr<void>(m_alive)] {
        if (alive.expired())
            return;
        const auto status = request.wait();
        if (!status) {
            qCDebug(lcComm).noquote() << m_name << "stops listening:" << status.error().message;
            return;
        }
        m_handler(*status, request);
        post();
    });
}

} // namespace mmpi
