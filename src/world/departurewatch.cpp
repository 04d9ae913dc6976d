#include "departurewatch.h"

#include <algorithm>

namespace mmpi::detail {

DepartureWatch::DepartureWatch(RateSink sink, QObject *parent)
    : QObject(parent), m_sink(std::move(sink)), m_timer(this)
{
    m_timer.setSingleShot(true);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &DepartureWatch::poll);
}

// Waits still open go with the engine that made them, like its outboxes.
DepartureWatch::~DepartureWatch() = default;

quint64 DepartureWatch::departed(const Link *link)
{
    const quint64 queued = link->counters().bytesQueued;
    return queued - std::min<quint64>(queued, quint64(std::max<qint64>(0, link->unsentBytes())));
}

DepartureWatch::Watched &DepartureWatch::watched(int rank, Link *link)
{
    for (Watched &w : m_links)
        if (w.link == link)
            return w;
    Watched w;
    w.rank = rank;
    w.link = link;
    m_links.push_back(std::move(w));
    return m_links.back();
}

void DepartureWatch::waitForDeparture(int rank, Link *link, SendCallback done)
{
    if (!link || link->state() != Link::State::Connected || link->unsentBytes() <= SlackBytes) {
        if (done)
            done({});
        return;
    }
    const quint64 queued = link->counters().bytesQueued;
    watched(rank, link).waits.push_back({queued - std::min<quint64>(queued, SlackBytes), std::move(done)});
    schedule();
}

void DepartureWatch::noteQueued(int rank, Link *link, quint64 bytes)
{
    // Not the frame's size: a segmented stream queues many small frames,
    // and it is what waits in the link that drains at the radio's rate.
    if (bytes == 0 || !link || link->state() != Link::State::Connected)
        return;
    for (const Watched &w : m_links)
        if (w.link == link && w.sampling)
            return;
    if (quint64(std::max<qint64>(0, link->unsentBytes())) < MinSampleBytes)
        return;
    Watched &w = watched(rank, link);
    w.sampling = true;
    w.sampleFrom = departed(link);
    w.sampleClock.start();
    schedule();
}

void DepartureWatch::poll()
{
    // Callbacks run after the sweep: one may queue another frame, and with it
    // a new wait, on the very list being swept.
    std::vector<SendCallback> ready;
    for (Watched &w : m_links)
        if (!check(w, ready))
            w.rank = -1;
    std::erase_if(m_links, [](const Watched &w) { return w.rank < 0; });
    for (SendCallback &done : ready)
        done({});
    schedule();
}

bool DepartureWatch::check(Watched &w, std::vector<SendCallback> &ready)
{
    const Link *link = w.link;
    if (!link || link->state() != Link::State::Connected) {
        for (Wait &wait : w.waits)
            ready.push_back(std::move(wait.done));
        return false;
    }
    const quint64 now = departed(link);
    while (!w.waits.empty() && w.waits.front().mark <= now) {
        ready.push_back(std::move(w.waits.front().done));
        w.waits.pop_front();
    }
    if (w.sampling && link->unsentBytes() == 0)
        finishSample(w, now);
    return w.sampling || !w.waits.empty();
}

// Only a drain that ran until the link was empty is a rate: one cut short by
// a closing link says nothing of the radio.
void DepartureWatch::finishSample(Watched &w, quint64 departedNow)
{
    w.sampling = false;
    const qint64 elapsedNs = w.sampleClock.nsecsElapsed();
    const quint64 bytes = departedNow - std::min(departedNow, w.sampleFrom);
    if (bytes < MinSampleBytes || elapsedNs <= 0)
        return;
    const double perSecond = double(bytes) * 1e9 / double(elapsedNs);
    w.bytesPerMs = perSecond / 1000.0;
    if (m_sink)
        m_sink(w.rank, perSecond);
}

// The next poll comes about when the link that will drain first is half
// way there, by its last rate; without a rate, soon.
void DepartureWatch::schedule()
{
    if (m_links.empty()) {
        m_timer.stop();
        return;
    }
    double soonestMs = MaxPollMs;
    for (const Watched &w : m_links) {
        const qint64 unsent = w.link ? w.link->unsentBytes() : 0;
        const double ms = w.bytesPerMs > 0 ? double(unsent) / w.bytesPerMs / 2.0 : PollMs;
        soonestMs = std::min(soonestMs, ms);
    }
    const int interval = std::clamp(int(soonestMs), PollMs, MaxPollMs);
    if (!m_timer.isActive() || m_timer.remainingTime() > interval)
        m_timer.start(interval);
}

} // namespace mmpi::detail
