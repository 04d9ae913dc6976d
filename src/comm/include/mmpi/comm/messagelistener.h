// mmpi::MessageListener: keeps one receive posted on a communicator for every
// source and tag, and hands each message to a handler on the owner's thread —
// the inbox of a protocol that answers whoever writes to it (agreements, work
// pools, checkpoint copies, shared canvases). Withdrawn when destroyed, so a
// message that comes later waits for the next listener instead of being lost.
#pragma once

#include <mmpi/comm/communicator.h>

#include <QObject>

#include <functional>
#include <memory>

namespace mmpi {

class MessageListener
{
public:
    // The message's status and its finished request (take the items with
    // request.value<T>()).
    using Handler = std::function<void(const Status &status, const Request &request)>;

    // Listens on `comm` (for messages with `tag` only, unless AnyTag) until
    // destroyed or the communicator stops (the world closed, it was revoked:
    // logged at debug level with `name`); an interrupt
    // (Communicator::interrupt()) does not stop it. `handler` runs on
    // `owner`'s thread, and never after `owner` is gone.
    MessageListener(const Communicator &comm, QObject *owner, QString name, Handler handler, int tag = AnyTag);
    ~MessageListener();
    MessageListener(const MessageListener &) = delete;
    MessageListener &operator=(const MessageListener &) = delete;

    // Hands the handler, here and now, every message that has arrived for
    // this listener but waits for its turn in the owner's event queue, for a
    // protocol that must act on those before an event it is handling (an
    // agreement's decision before a loss report). Returns how many.
    int deliverPending();

private:
    void post();
    bool deliver(Request request);

    Communicator m_comm;
    QObject *m_owner;
    QString m_name;
    Handler m_handler;
    int m_tag;
    Request m_posted;
    quint64 m_posts = 0; // a queued delivery of an earlier post was made by deliverPending()
    quint64 m_failures = 0; // the communicator's interrupts and revokes when m_posted was posted
    bool m_stopped = false;
    std::shared_ptr<void> m_alive = std::make_shared<int>(0);
};

} // namespace mmpi
