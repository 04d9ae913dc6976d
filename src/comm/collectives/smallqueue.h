// SmallQueue: a first-in first-out queue that keeps its first N items in
// place. A collective op queues a frame or two to handle and a few to send;
// a QList allocated for each of them, on every rank of every call.
#pragma once

#include <QVarLengthArray>

#include <utility>

namespace mmpi::detail {

template<typename T, qsizetype N>
class SmallQueue
{
public:
    bool isEmpty() const { return m_head == m_items.size(); }
    void push(T item) { m_items.push_back(std::move(item)); }
    // The oldest item; the queue must not be empty. Storage is reused once
    // the queue drains.
    T take()
    {
        T item = std::move(m_items[m_head++]);
        if (isEmpty())
            clear();
        return item;
    }
    void clear()
    {
        m_items.clear();
        m_head = 0;
    }
    template<typename F>
    void forEach(F &&f) const
    {
        for (qsizetype i = m_head; i < m_items.size(); ++i)
            f(m_items[i]);
    }

private:
    QVarLengthArray<T, N> m_items;
    qsizetype m_head = 0;
};

} // namespace mmpi::detail
