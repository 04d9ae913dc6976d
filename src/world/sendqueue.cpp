#include "sendqueue.h"

namespace mmpi::detail {

bool SendQueue::post(Post post)
{
    QMutexLocker lock(&m_mutex);
    m_posts.push_back(std::move(post));
    return m_posts.size() == 1;
}

std::vector<SendQueue::Post> SendQueue::takeAll()
{
    std::vector<Post> taken;
    QMutexLocker lock(&m_mutex);
    taken.swap(m_posts);
    return taken;
}

} // namespace mmpi::detail
