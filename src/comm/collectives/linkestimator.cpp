#include "linkestimator.h"

#include "collectivetag.h"

#include <mmpi/core/logging.h>
#include <mmpi/world/world.h>

#include <QTimer>
#include <QtEndian>

#include <algorithm>

namespace mmpi::detail {

namespace {

constexpr qint32 PingTag = 1;
constexpr qint32 PongTag = 2;
constexpr int NonceBytes = 8;

Frame probeFrame(qint32 tag, quint64 nonce, qint64 bytes)
{
    QByteArray payload(qMax<qint64>(bytes, NonceBytes), '\0');
    qToBigEndian(nonce, payload.data());
    Frame frame = makeFrame(FrameKind::Data, ItemType::UnsignedByte, quint32(payload.size()), payload);
    frame.header.communicator = ProbeContext;
    frame.header.tag = tag;
    return frame;
}

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    return n % 2 ? values.at(n / 2) : (values.at(n / 2 - 1) + values.at(n / 2)) / 2;
}

} // namespace

LinkEstimator::LinkEstimator(World *world)
    : m_world(world)
{
    m_clock.start();
}

LinkEstimator::~LinkEstimator()
{
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = true;
    }
    m_probeStarted.notify_all();
    if (m_watchdog.joinable())
        m_watchdog.join();
}

// Runs on its own thread and touches only this object: it may outlive the
// world's progress thread by the time the router is destroyed.
void LinkEstimator::watch()
{
    std::unique_lock<QMutex> lock(m_mutex);
    while (!m_stopping) {
        if (!m_probe) {
            m_probeStarted.wait(lock);
            continue;
        }
        const qint64 left = m_probe->sentAtMs + GiveUpAfterMs - m_clock.elapsed();
        if (left > 0) {
            m_probeStarted.wait_for(lock, std::chrono::milliseconds(left));
            continue;
        }
        qCWarning(lcComm) << "link probe of rank" << m_probe->peer << "got no answer for" << GiveUpAfterMs
                          << "ms; giving up on" << m_queue.size() + 1 << "probe(s)";
        m_probe.reset();
        m_queue.clear();
        const auto waiters = std::exchange(m_waiters, {});
        lock.unlock();
        for (const auto &f : waiters)
            f();
        lock.lock();
    }
}

LinkModel LinkEstimator::model(const QList<int> &peers)
{
    Next next;
    LinkModel model;
    {
        QMutexLocker lock(&m_mutex);
        if (m_fixed)
            return *m_fixed;
        const qint64 now = m_clock.elapsed();
        // Every broadcast asks, mostly for the same peers: what was worked
        // out a moment ago with the same estimates holds (medians and the
        // probe check took a few microseconds of each call's start).
        if (m_memo.generation == m_generation && now - m_memo.atMs < MemoMs && m_memo.peers == peers)
            return m_memo.model;
        QList<double> latencies, rates, overheads;
        const auto collect = [&](auto keep) {
            for (auto it = m_estimates.cbegin(); it != m_estimates.cend(); ++it)
                if (keep(it.key())) {
                    latencies.append(it->latencyUs);
                    rates.append(it->bytesPerUs);
                    overheads.append(it->overheadUs);
                }
        };
        collect([&](int peer) { return peers.contains(peer); });
        if (latencies.isEmpty())
            collect([](int) { return true; });
        if (!latencies.isEmpty()) {
            model.latencyUs = median(latencies);
            model.bytesPerUs = median(rates);
            model.overheadUs = median(overheads);
        }
        if (m_probe && now - m_probe->sentAtMs > GiveUpAfterMs) {
            qCDebug(lcComm) << "link probe of rank" << m_probe->peer << "gave no answer; abandoned";
            m_probe.reset();
        }
        if (!m_probe && m_queue.isEmpty()) {
            const int me = m_world->rank();
            for (int peer : peers) {
                const auto it = m_estimates.constFind(peer);
                const bool unknown = it == m_estimates.cend();
                if (peer == me || m_gone.contains(peer))
                    continue;
                const bool stale = !unknown && now - it->measuredAtMs > StaleAfterMs;
                if ((unknown && m_autoProbed.size() < MaxAutoProbes) || stale) {
                    m_autoProbed.insert(peer);
                    m_queue.append(peer);
                    break;
                }
            }
        }
        next = nextProbe();
        m_memo = {peers, model, m_generation, now};
    }
    run(std::move(next));
    return model;
}

void LinkEstimator::measure(const QList<int> &peers, std::function<void()> done)
{
    Next next;
    {
        QMutexLocker lock(&m_mutex);
        if (m_probe && m_clock.elapsed() - m_probe->sentAtMs > GiveUpAfterMs)
            m_probe.reset();
        const int me = m_world->rank();
        for (int peer : peers)
            if (peer != me && !m_gone.contains(peer) && !m_queue.contains(peer)
                && !(m_probe && m_probe->peer == peer))
                m_queue.append(peer);
        m_waiters.append(std::move(done));
        next = nextProbe();
    }
    run(std::move(next));
}

LinkEstimator::Next LinkEstimator::nextProbe()
{
    Next next;
    if (m_probe)
        return next;
    while (!m_queue.isEmpty()) {
        const int peer = m_queue.takeFirst();
        if (m_gone.contains(peer))
            continue;
        startProbe(peer);
        next.peer = peer;
        next.pings = burst(1, NonceBytes);
        return next;
    }
    next.finished = std::exchange(m_waiters, {});
    return next;
}

void LinkEstimator::run(Next next)
{
    if (next.peer >= 0)
        sendPings(next.peer, std::move(next.pings));
    for (const auto &f : next.finished)
        f();
}

std::optional<LinkEstimator::Estimate> LinkEstimator::estimate(int peer) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_estimates.constFind(peer);
    return it == m_estimates.cend() ? std::nullopt : std::optional<Estimate>(*it);
}

void LinkEstimator::setFixedModel(std::optional<LinkModel> model)
{
    QMutexLocker lock(&m_mutex);
    m_fixed = model;
    ++m_generation;
}

void LinkEstimator::startProbe(int peer)
{
    m_probe = Probe{};
    m_probe->peer = peer;
    if (!m_watchdog.joinable())
        m_watchdog = std::thread([this] { watch(); });
    m_probeStarted.notify_all();
}

QList<Frame> LinkEstimator::burst(int count, qint64 bytes)
{
    Probe &p = *m_probe;
    p.firstNonce = m_nextNonce;
    m_nextNonce += quint64(count);
    p.sent = count;
    p.answered = 0;
    p.sentAtUs = nowUs();
    p.sentAtMs = m_clock.elapsed();
    QList<Frame> frames;
    for (int i = 0; i < count; ++i)
        frames.append(probeFrame(PingTag, p.firstNonce + quint64(i), bytes));
    return frames;
}

// Latency: single small pings, one after the other. Overhead: a burst of
// small ones costs one round trip plus a frame's cost per further ping. Rate:
// a burst of large ones costs one round trip plus their bytes at the rate of
// the slowest stage (the radio, on a radio), grown until that is measurable.
// Every kind is measured more than once: ProbeSamples keeps the best sample
// and tells from their spread whether other traffic got in the way.
QList<Frame> LinkEstimator::burstDone(double elapsedUs)
{
    Probe &p = *m_probe;
    ProbeSamples &samples = p.samples;
    switch (p.phase) {
    case Phase::Latency:
        samples.addRoundTrip(elapsedUs);
        if (samples.roundTrips() < LatencyPings)
            return burst(1, NonceBytes);
        p.phase = Phase::Overhead;
        return burst(OverheadBurst, NonceBytes);
    case Phase::Overhead:
        samples.addOverheadBurst(elapsedUs, OverheadBurst);
        if (samples.overheadBursts() < OverheadRounds)
            return burst(OverheadBurst, NonceBytes);
        p.phase = Phase::Rate;
        return burst(RateBurst, p.bulkBytes);
    case Phase::Rate: {
        const double rtt = samples.roundTripUs();
        if (!p.bulkGrown && elapsedUs - rtt < std::max(1000.0, 2 * rtt) && p.bulkBytes < MaxBulkBytes) {
            p.bulkBytes *= 4; // too quick to tell yet
            return burst(RateBurst, p.bulkBytes);
        }
        p.bulkGrown = true;
        samples.addRateBurst(elapsedUs, RateBurst * p.bulkBytes);
        if (samples.rateBursts() < RateRounds)
            return burst(RateBurst, p.bulkBytes);
        finishProbe();
        return {};
    }
    }
    return {};
}

void LinkEstimator::sendPings(int peer, QList<Frame> pings)
{
    for (Frame &ping : pings)
        if (auto sent = m_world->sendFrame(peer, std::move(ping)); !sent) {
            Next next;
            {
                QMutexLocker lock(&m_mutex);
                if (m_probe && m_probe->peer == peer)
                    m_probe.reset();
                next = nextProbe();
            }
            return run(std::move(next));
        }
}

void LinkEstimator::finishProbe()
{
    const Probe &p = *m_probe;
    const auto old = m_estimates.constFind(p.peer);
    const Estimate fresh = p.samples.estimate(double(NonceBytes + FrameHeaderSize), m_clock.elapsed());
    const Estimate e = mergedEstimate(old == m_estimates.cend() ? nullptr : &*old, fresh);
    m_estimates.insert(p.peer, e);
    ++m_generation;
    qCDebug(lcComm) << "link to rank" << p.peer << ": latency" << e.latencyUs << "us, overhead" << e.overheadUs
                    << "us per frame," << e.bytesPerUs << "bytes/us (" << RateBurst << "x" << p.bulkBytes
                    << "byte pings)" << (fresh.disturbed ? "; the probe met other traffic" : "");
    m_probe.reset();
}

void LinkEstimator::handleFrame(const Frame &frame)
{
    if (frame.payload.size() < NonceBytes)
        return;
    const quint64 nonce = qFromBigEndian<quint64>(frame.payload.constData());
    if (frame.header.tag == PingTag)
        return answer(frame.header.source, nonce, 0);
    if (frame.header.tag != PongTag)
        return;
    Next next;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_probe || m_probe->peer != frame.header.source || nonce < m_probe->firstNonce
            || nonce >= m_probe->firstNonce + quint64(m_probe->sent))
            return;
        if (++m_probe->answered < m_probe->sent)
            return;
        const int peer = m_probe->peer;
        next.pings = burstDone(nowUs() - m_probe->sentAtUs);
        if (m_probe)
            next.peer = peer;
        else
            next = nextProbe(); // that one is measured: the next in the queue
    }
    run(std::move(next));
}

// Answered here, on the progress thread, whatever the app is doing. A ping
// can come before this node's World says it is formed (the root's Start is
// in, the World's own thread has not seen it yet): then the pong waits for it.
void LinkEstimator::answer(int peer, quint64 nonce, int attempt)
{
    const auto sent = m_world->sendFrame(peer, probeFrame(PongTag, nonce, NonceBytes));
    if (sent || sent.error().code != ErrorCode::NotFormed || attempt >= MaxAnswerRetries)
        return;
    std::weak_ptr<LinkEstimator> self = weak_from_this();
    QTimer::singleShot(1, [self, peer, nonce, attempt] {
        if (const auto estimator = self.lock())
            estimator->answer(peer, nonce, attempt + 1);
    });
}

// A new node in the rank: nothing measured of the old one applies to it.
void LinkEstimator::handlePeerRejoined(int rank)
{
    QMutexLocker lock(&m_mutex);
    m_gone.remove(rank);
    m_estimates.remove(rank);
    ++m_generation;
}

void LinkEstimator::handlePeerGone(int rank)
{
    Next next;
    {
        QMutexLocker lock(&m_mutex);
        m_gone.insert(rank);
        m_estimates.remove(rank);
        ++m_generation;
        if (!m_probe || m_probe->peer != rank)
            return;
        m_probe.reset();
        next = nextProbe();
    }
    run(std::move(next));
}

} // namespace mmpi::detail
