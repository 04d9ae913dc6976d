#include "simradio.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace mmpi {

namespace {

// As long as a StreamLink lets a closed link's socket flush.
constexpr int LingerTimeoutMs = 10000;
constexpr qint64 NsPerMs = 1000000;

} // namespace

SimRadio::SimRadio(QObject *parent)
    : QObject(parent), m_timer(this)
{
    m_clock.start();
    m_timer.setSingleShot(true);
    // A coarse timer may fire 5 % early or late; at 30 ms that is a visible error.
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &SimRadio::advance);
}

SimRadio::~SimRadio() = default;

void SimRadio::setShape(qint64 latencyMs, qint64 bandwidth)
{
    m_latencyNs = latencyMs * NsPerMs;
    m_bandwidth = bandwidth;
    schedule();
}

qint64 SimRadio::transmitNs(qint64 bytes) const
{
    if (m_bandwidth <= 0)
        return 0;
    // In double: bytes * 1e9 overflows 64 bits for queues of many GiB.
    return qint64(std::ceil(double(bytes) * 1e9 / double(m_bandwidth)));
}

bool SimRadio::send(Link *link, const Frame &frame)
{
    const qint64 size = FrameHeaderSize + frame.payload.size();
    if (m_queuedBytes + size > m_queueLimit)
        return false;
    m_transmit.push_back({link, link, frame, size, now()});
    m_queuedBytes += size;
    m_pending[link] += size;
    advance();
    return true;
}

// Moves every frame whose time has come: off the radio onto the air, and off
// the air into its link. A delivered frame runs the link's slots, which may
// send (queued behind, picked up by the next pass), drop frames or close
// links; nothing here holds a reference into the queues across a delivery.
void SimRadio::advance()
{
    if (m_advancing)
        return;
    m_advancing = true;
    QPointer<SimRadio> self(this);
    bool delivered = true;
    while (delivered) {
        delivered = false;
        const qint64 t = now();
        while (!m_transmit.empty()) {
            Entry &head = m_transmit.front();
            const qint64 end = std::max(m_freeAt, head.time) + transmitNs(head.size);
            if (end > t)
                break;
            m_freeAt = end;
            Entry entry = std::move(head);
            m_transmit.pop_front();
            // The max only matters when the latency was lowered while frames
            // were on the air: a link never overtakes its own frames.
            entry.time = m_air.empty() ? end + m_latencyNs : std::max(end + m_latencyNs, m_air.back().time);
            m_air.push_back(std::move(entry));
        }
        while (!m_air.empty() && m_air.front().time <= t) {
            Entry entry = std::move(m_air.front());
            m_air.pop_front();
            forget(entry);
            deliver(entry);
            if (!self)
                return;
            finishClosing(entry.key);
            delivered = true;
        }
    }
    m_advancing = false;
    schedule();
}

void SimRadio::deliver(Entry &entry)
{
    if (entry.link && entry.link->state() == Link::State::Connected)
        entry.link->sendFrame(entry.frame);
}

void SimRadio::schedule()
{
    qint64 next = -1;
    if (!m_transmit.empty()) {
        const Entry &head = m_transmit.front();
        next = std::max(m_freeAt, head.time) + transmitNs(head.size);
    }
    if (!m_air.empty())
        next = next < 0 ? m_air.front().time : std::min(next, m_air.front().time);
    if (next < 0) {
        m_timer.stop();
        return;
    }
    const qint64 wait = next - now();
    // Rounded up: a timer that fires early would only have to wait again.
    m_timer.start(wait <= 0 ? 0 : int(std::min<qint64>((wait + NsPerMs - 1) / NsPerMs, INT_MAX)));
}

void SimRadio::forget(const Entry &entry)
{
    m_queuedBytes -= entry.size;
    const auto it = m_pending.find(entry.key);
    if (it == m_pending.end())
        return;
    it.value() -= entry.size;
    if (it.value() <= 0)
        m_pending.erase(it);
}

void SimRadio::drop(const Link *link)
{
    const bool wasOnRadio = !m_transmit.empty() && m_transmit.front().key == link;
    for (auto *queue : {&m_transmit, &m_air}) {
        const auto gone = std::remove_if(queue->begin(), queue->end(),
                                         [link](const Entry &e) { return e.key == link; });
        std::for_each(gone, queue->end(), [this](const Entry &e) { forget(e); });
        queue->erase(gone, queue->end());
    }
    // The abandoned frame held the radio until now; the next one starts afresh.
    if (wasOnRadio)
        m_freeAt = now();
    m_pending.remove(link);
    finishClosing(link);
    schedule();
}

void SimRadio::dropAll()
{
    m_transmit.clear();
    m_air.clear();
    m_pending.clear();
    m_queuedBytes = 0;
    m_freeAt = now();
    for (const QPointer<Link> &link : std::exchange(m_closing, {})) {
        if (link) {
            link->close();
            link->deleteLater();
        }
    }
    schedule();
}

void SimRadio::closeWhenSent(Link *link)
{
    link->setParent(this);
    m_closing.insert(link, link);
    // The lambda goes with the link; the radio, its parent, outlives it.
    QTimer::singleShot(LingerTimeoutMs, link, [this, link] { drop(link); });
    finishClosing(link);
}

void SimRadio::finishClosing(const Link *key)
{
    const auto it = m_closing.find(key);
    if (it == m_closing.end() || m_pending.contains(key))
        return;
    const QPointer<Link> link = it.value();
    m_closing.erase(it);
    if (link) {
        link->close();
        link->deleteLater();
    }
}

} // namespace mmpi
