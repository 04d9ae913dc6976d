// SendQueue: the one way frames from application threads reach the progress
// thread, which owns every link. A post wakes the engine only when the queue
// was empty, so a burst of sends costs one wake-up (ZeroMQ's mailbox does the
// same with its signaler).
#pragma once

#include "outbox.h"

#include <QMutex>

#include <vector>

namespace mmpi::detail {

class SendQueue
{
public:
    struct Post
    {
        int destination = 0;
        Frame frame;
        SendCallback done;
        bool whenDeparted = false; // World::Completion::Departed
    };

    // Any thread. True if the queue was empty: the caller wakes the engine,
    // whose next takeAll() then finds this post and any that follow it.
    bool post(Post post);
    // The progress thread: everything posted so far, in the order posted.
    std::vector<Post> takeAll();

private:
    QMutex m_mutex;
    std::vector<Post> m_posts;
};

} // namespace mmpi::detail
