#include "linkestimator.h"

#include "collectivetag.h"

#include <mmpi/core/logging.h>
#include <mmpi/world/world.h>

#include <QtEndian>

#include <algorithm>

namespace mmpi::detail {

namespace {

constexpr qint32 PingTag = 1;
constexpr qint32 PongTag = 2;
constexpr int SmallPings = 3;
constexpr int BulkRepeats = 2;
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

LinkModel LinkEstimator::model(const QList<int> &peers)
{
    std::optional<std::pair<int, Frame>> ping;
    LinkModel model;
    {
        QMutexLocker lock(&m_mutex);
        if (m_fixed)
            return *m_fixed;
        const qint64 now = m_clock.elapsed();
        QList<double> latencies, rates;
        const auto collect = [&](auto keep) {
            for (auto it = m_estimates.cbegin(); it != m_estimates.cend(); ++it)
                if (keep(it.key())) {
                    latencies.append(it->latencyUs);
                    rates.append(it->bytesPerUs);
                }
        };
        collect([&](int peer) { return peers.contains(peer); });
        if (latencies.isEmpty())
            collect([](int) { return true; });
        if (!latencies.isEmpty()) {
            model.latencyUs = median(latencies);
            model.bytesPerUs = median(rates);
        }
        if (m_probe && now - m_probe->startedAtMs > GiveUpAfterMs) {
            qCDebug(lcComm) << "link probe of rank" << m_probe->peer << "gave no answer; abandoned";
            m_probe.reset();
        }
        if (!m_probe) {
            const int me = m_world->rank();
            for (int peer : peers) {
                const auto it = m_estimates.constFind(peer);
                if (peer != me && (it == m_estimates.cend() || now - it->measuredAtMs > StaleAfterMs)) {
                    startProbe(peer);
                    ping = {{peer, nextPing()}};
                    break;
                }
            }
        }
    }
    if (ping)
        sendPing(ping->first, std::move(ping->second));
    return model;
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
}

void LinkEstimator::startProbe(int peer)
{
    m_probe = Probe{};
    m_probe->peer = peer;
    m_probe->startedAtMs = m_clock.elapsed();
}

Frame LinkEstimator::nextPing()
{
    m_probe->nonce = m_nextNonce++;
    m_probe->sentAtUs = nowUs();
    return probeFrame(PingTag, m_probe->nonce, m_probe->bulkBytes);
}

void LinkEstimator::sendPing(int peer, Frame ping)
{
    if (auto sent = m_world->sendFrame(peer, std::move(ping)); !sent) {
        QMutexLocker lock(&m_mutex);
        if (m_probe && m_probe->peer == peer)
            m_probe.reset();
    }
}

void LinkEstimator::finishProbe()
{
    Probe &p = *m_probe;
    const double extraUs = p.bulkRttUs - p.smallRttUs;
    // Too fast to see even with the largest ping: call it 100 GB/s.
    const double rate = extraUs > 0 ? double(p.bulkBytes) / extraUs : 1e5;
    const double smallFrameUs = double(NonceBytes + FrameHeaderSize) / rate;
    Estimate e;
    e.bytesPerUs = std::min(rate, 1e5);
    e.latencyUs = std::max(0.0, p.smallRttUs / 2 - smallFrameUs);
    e.measuredAtMs = m_clock.elapsed();
    m_estimates.insert(p.peer, e);
    qCDebug(lcComm) << "link to rank" << p.peer << ": latency" << e.latencyUs << "us," << e.bytesPerUs
                    << "bytes/us (" << p.bulkBytes << "byte pings)";
    m_probe.reset();
}

void LinkEstimator::handleFrame(const Frame &frame)
{
    if (frame.header.payloadLength < NonceBytes && frame.payload.size() < NonceBytes)
        return;
    const quint64 nonce = qFromBigEndian<quint64>(frame.payload.constData());
    if (frame.header.tag == PingTag) {
        // Answered here, on the progress thread, whatever the app is doing.
        (void)m_world->sendFrame(frame.header.source, probeFrame(PongTag, nonce, NonceBytes));
        return;
    }
    if (frame.header.tag != PongTag)
        return;
    std::optional<Frame> ping;
    int peer = -1;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_probe || m_probe->peer != frame.header.source || m_probe->nonce != nonce)
            return;
        Probe &p = *m_probe;
        const double rtt = nowUs() - p.sentAtUs;
        if (p.bulkBytes == 0) {
            p.smallRttUs = std::min(p.smallRttUs, rtt);
            if (++p.step == SmallPings)
                p.bulkBytes = FirstBulkBytes;
        } else {
            const double threshold = std::max(100.0, p.smallRttUs / 2);
            if (rtt - p.smallRttUs < threshold && p.bulkBytes < MaxBulkBytes && p.bulkRepeats == 0) {
                p.bulkBytes *= 2; // not measurable yet: a bigger ping
            } else {
                p.bulkRttUs = std::min(p.bulkRttUs, rtt);
                if (++p.bulkRepeats == BulkRepeats) {
                    finishProbe();
                    return;
                }
            }
        }
        peer = p.peer;
        ping = nextPing();
    }
    sendPing(peer, std::move(*ping));
}

void LinkEstimator::handlePeerGone(int rank)
{
    QMutexLocker lock(&m_mutex);
    m_estimates.remove(rank);
    if (m_probe && m_probe->peer == rank)
        m_probe.reset();
}

} // namespace mmpi::detail
