#include "directpath.h"

namespace mmpi::detail {

void DirectPath::setLink(Link *link)
{
    std::shared_ptr<LinkReader> reader = link ? link->reader() : nullptr;
    QMutexLocker lock(&m_mutex);
    m_link = link;
    m_reader = std::move(reader);
}

std::shared_ptr<LinkReader> DirectPath::reader() const
{
    QMutexLocker lock(&m_mutex);
    return m_reader;
}

bool DirectPath::trySend(Frame &frame)
{
    QMutexLocker lock(&m_mutex);
    // A frame still in the engine was sent before this one (by this thread,
    // or by one that synchronised with it): it must reach the link first.
    if (!m_link || m_queued.load() != 0)
        return false;
    frame.header.sequence = m_nextSequence;
    if (!m_link->trySendNow(frame, m_queueLimit))
        return false;
    ++m_nextSequence;
    return true;
}

quint64 DirectPath::takeSequence()
{
    QMutexLocker lock(&m_mutex);
    return m_nextSequence++;
}

} // namespace mmpi::detail
