#include "failuredetector.h"

#include <algorithm>
#include <cmath>

#include <mmpi/core/logging.h>

#include <QtEndian>

namespace mmpi::detail {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

qint64 msBetween(FailureDetector::TimePoint from, FailureDetector::TimePoint to)
{
    return duration_cast<milliseconds>(to - from).count();
}

} // namespace

FailureDetector::FailureDetector(milliseconds interval, milliseconds timeout)
    : m_interval(interval), m_timeout(timeout)
{
}

milliseconds FailureDetector::checkPeriod() const
{
    return std::max(milliseconds(1), m_interval / 4);
}

void FailureDetector::start(int ownRank, TimePoint now)
{
    QMutexLocker lock(&m_mutex);
    m_ownRank = ownRank;
    m_lastCheck = now;
}

void FailureDetector::watch(int rank, TimePoint now, quint64 framesSent)
{
    QMutexLocker lock(&m_mutex);
    Peer &peer = m_peers[rank];
    peer = Peer{};
    peer.lastHeard = now;
    peer.lastSent = now;
    peer.dataFramesSeen = framesSent;
}

void FailureDetector::setReading(int rank, bool reading, TimePoint now)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end())
        return;
    it->reading = reading;
    // The silence before reading resumed was this node's doing.
    if (reading)
        it->lastHeard = std::max(it->lastHeard, now);
}

bool FailureDetector::release(int rank, World::NodeStatus status)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end() || !isTimed(*it))
        return false;
    it->status = status;
    if (status == World::NodeStatus::Lost)
        it->outstanding.clear();
    return true;
}

bool FailureDetector::markUnreachable(int rank)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end() || it->status == World::NodeStatus::Left || it->status == World::NodeStatus::Unreachable)
        return false;
    it->status = World::NodeStatus::Unreachable;
    it->outstanding.clear();
    return true;
}

bool FailureDetector::giveUp(int rank)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end() || it->status != World::NodeStatus::Unreachable)
        return false;
    it->status = World::NodeStatus::Lost;
    return true;
}

bool FailureDetector::heard(int rank, TimePoint now)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end() || !isTimed(*it))
        return false;
    it->lastHeard = now;
    if (it->status != World::NodeStatus::Suspect)
        return false;
    it->status = World::NodeStatus::Alive;
    return true;
}

QList<FailureDetector::Verdict> FailureDetector::check(
    TimePoint now, const std::function<std::optional<Activity>(int rank)> &activity)
{
    QList<Verdict> verdicts;
    if (!isEnabled())
        return verdicts;
    QMutexLocker lock(&m_mutex);
    // A check that comes much later than planned means this node itself was
    // not running (its progress thread blocked, the process stopped or the
    // phone asleep). Frames its peers sent meanwhile wait unread in the
    // socket, so that time is not held against them.
    if (m_lastCheck && now - *m_lastCheck > 2 * checkPeriod()) {
        const auto stalled = now - *m_lastCheck - checkPeriod();
        qCInfo(lcWorld) << "this node did not run for" << duration_cast<milliseconds>(stalled).count()
                        << "ms; its peers' silence meanwhile is not counted";
        for (Peer &peer : m_peers)
            peer.lastHeard = std::min(now, peer.lastHeard + stalled);
    }
    m_lastCheck = now;
    for (auto it = m_peers.begin(); it != m_peers.end(); ++it) {
        if (it->status == World::NodeStatus::Lost || it->status == World::NodeStatus::Unreachable)
            continue;
        Verdict verdict;
        verdict.rank = it.key();
        checkPeer(it.key(), *it, now, activity(it.key()), verdict);
        if (verdict.heartbeat || verdict.becameSuspect || verdict.lost)
            verdicts.append(std::move(verdict));
    }
    takeTurns(verdicts);
    return verdicts;
}

// Peers that went idle together get their heartbeats in one burst, sent in
// this order, each behind the airtime of those before it (15 requests are
// 27 ms on a 90 kB/s radio). In one fixed order the last peers' round trips
// would always include that wait and their smallest one never show the
// link; taking turns first puts each peer first in some burst.
void FailureDetector::takeTurns(QList<Verdict> &verdicts)
{
    if (verdicts.size() < 2)
        return;
    std::sort(verdicts.begin(), verdicts.end(), [](const Verdict &a, const Verdict &b) { return a.rank < b.rank; });
    const auto first = qsizetype(m_bursts++ % quint64(verdicts.size()));
    std::rotate(verdicts.begin(), verdicts.begin() + first, verdicts.end());
}

void FailureDetector::checkPeer(int rank, Peer &peer, TimePoint now, const std::optional<Activity> &activity,
                                Verdict &verdict)
{
    if (!peer.reading) {
        peer.lastHeard = now;
    } else if (isTimed(peer)) {
        const auto silence = now - peer.lastHeard;
        if (silence >= m_timeout) {
            peer.status = World::NodeStatus::Lost;
            peer.outstanding.clear();
            verdict.lost = Error{ErrorCode::NodeLost,
                                 QStringLiteral("no frame or heartbeat from rank %1 for %2 ms (heartbeat timeout %3 ms)")
                                     .arg(rank)
                                     .arg(duration_cast<milliseconds>(silence).count())
                                     .arg(m_timeout.count())};
            return;
        }
        if (silence >= suspectAfter() && peer.status == World::NodeStatus::Alive) {
            peer.status = World::NodeStatus::Suspect;
            verdict.becameSuspect = true;
        }
    }
    // A peer that said goodbye still hears from us: it is timing us while it
    // waits for our own goodbye.
    if (!activity || !m_sending)
        return;
    // Our own heartbeats and echoes are not traffic: if they were, answering
    // a peer's requests would stop this node from ever sending its own, and
    // it would never measure a round trip.
    const quint64 dataFrames = activity->framesSent - std::min(activity->framesSent, peer.heartbeatFrames);
    if (dataFrames != peer.dataFramesSeen) {
        peer.dataFramesSeen = dataFrames;
        peer.lastSent = now;
        return;
    }
    // Bytes still queued on the link will tell the peer we are here as soon
    // as they arrive; a heartbeat behind them would arrive no sooner.
    if (now - peer.lastSent >= m_interval && activity->bytesToWrite == 0)
        verdict.heartbeat = request(rank, peer, now);
}

std::optional<Frame> FailureDetector::probe(int rank, TimePoint now, Probe kind)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (!isEnabled() || !m_sending || it == m_peers.end() || !isTimed(*it))
        return std::nullopt;
    Frame frame = request(rank, *it, now);
    if (kind == Probe::RoundTripThenRate)
        it->rateProbeAfter = it->nextNonce - 1;
    return frame;
}

Frame FailureDetector::request(int rank, Peer &peer, TimePoint now)
{
    const quint64 nonce = peer.nextNonce++;
    if (peer.outstanding.size() >= MaxOutstanding)
        peer.outstanding.pop_front();
    peer.outstanding.emplace_back(nonce, now);
    peer.lastSent = now;
    ++peer.heartbeatFrames;
    ++peer.requestsSent;
    return makeHeartbeat(m_ownRank, rank, HeartbeatType::Request, nonce);
}

Error FailureDetector::violation(int rank, const QString &what) const
{
    return {ErrorCode::ProtocolViolation, QStringLiteral("bad heartbeat from rank %1: %2").arg(rank).arg(what)};
}

// The checks of protocol.md's table, in its order.
std::optional<Error> FailureDetector::malformed(int rank, const Frame &frame) const
{
    const FrameHeader &h = frame.header;
    const bool rateProbe = !frame.payload.isEmpty() && quint8(frame.payload.at(0)) == quint8(HeartbeatType::RateProbe);
    const qsizetype size = rateProbe ? PayloadSize + RateProbePadding : PayloadSize;
    if (h.itemType != ItemType::UnsignedByte || frame.payload.size() != size)
        return violation(rank, QStringLiteral("%1 payload of %2 bytes (expected UnsignedByte, %3 bytes)")
                                   .arg(itemTypeName(h.itemType))
                                   .arg(frame.payload.size())
                                   .arg(size));
    if (h.source != rank || (m_ownRank != NoRank && h.destination != m_ownRank))
        return violation(rank, QStringLiteral("it claims source %1 and destination %2").arg(h.source).arg(h.destination));
    if (h.communicator != 0 || h.tag != 0)
        return violation(rank, QStringLiteral("communicator %1 and tag %2 (both must be 0)").arg(h.communicator).arg(h.tag));
    const auto type = quint8(frame.payload.at(0));
    const auto nonce = qFromBigEndian<quint64>(frame.payload.constData() + 1);
    if (type < quint8(HeartbeatType::Request) || type > quint8(HeartbeatType::RateProbe))
        return violation(rank, QStringLiteral("unknown type %1").arg(type));
    if (rateProbe && nonce != quint64(RateProbePadding))
        return violation(rank, QStringLiteral("rate probe naming %1 bytes of padding (it has %2)").arg(nonce).arg(RateProbePadding));
    if (nonce == 0)
        return violation(rank, type == quint8(HeartbeatType::RateReport)
                                   ? QStringLiteral("rate report of 0 bytes per second")
                                   : QStringLiteral("nonce 0"));
    return std::nullopt;
}

Result<FailureDetector::Reply> FailureDetector::receive(int rank, const Frame &frame, TimePoint now)
{
    if (auto error = malformed(rank, frame))
        return *error;
    const auto type = quint8(frame.payload.at(0));
    const auto nonce = qFromBigEndian<quint64>(frame.payload.constData() + 1);

    QMutexLocker lock(&m_mutex);
    Reply reply;
    const auto it = m_peers.find(rank);
    // Before formation, or after the peer left or was lost: checked, not used.
    if (it == m_peers.end() || !isTimed(*it))
        return reply;
    Peer &peer = *it;
    // Its arrival is timed by the link, which reports the rate on its own.
    if (type == quint8(HeartbeatType::RateProbe))
        return reply;
    if (type == quint8(HeartbeatType::RateReport)) {
        peer.peerArrivalRate = double(nonce);
        ++peer.peerArrivalRateReports;
        reply.measured = true;
        return reply;
    }
    if (type == quint8(HeartbeatType::Request)) {
        // Links are ordered and a peer numbers its requests upwards.
        if (nonce <= peer.lastRequestReceived)
            return violation(rank, QStringLiteral("request %1 after request %2").arg(nonce).arg(peer.lastRequestReceived));
        peer.lastRequestReceived = nonce;
        ++peer.requestsReceived;
        if (m_sending) {
            ++peer.heartbeatFrames;
            reply.echo = makeHeartbeat(m_ownRank, rank, HeartbeatType::Echo, nonce);
        }
        return reply;
    }
    if (nonce >= peer.nextNonce)
        return violation(rank, QStringLiteral("echo of request %1, which was never sent (last sent: %2)")
                                   .arg(nonce).arg(peer.nextNonce - 1));
    if (nonce <= peer.lastEchoed)
        return violation(rank, QStringLiteral("echo of request %1 after the echo of %2").arg(nonce).arg(peer.lastEchoed));
    peer.lastEchoed = nonce;
    while (!peer.outstanding.empty() && peer.outstanding.front().first < nonce)
        peer.outstanding.pop_front();
    if (!peer.outstanding.empty() && peer.outstanding.front().first == nonce) {
        measure(peer, nonce, now);
        peer.outstanding.pop_front();
        reply.measured = true;
    }
    if (nonce == peer.rateProbeAfter && m_sending) {
        peer.rateProbeAfter = 0;
        ++peer.heartbeatFrames;
        reply.rateProbe = makeRateProbe(m_ownRank, rank);
    }
    return reply;
}

void FailureDetector::measure(Peer &peer, quint64 nonce, TimePoint now)
{
    const auto sample = duration_cast<microseconds>(now - peer.outstanding.front().second);
    peer.roundTrip = sample;
    peer.recentRoundTrips[peer.roundTripSamples % peer.recentRoundTrips.size()] = sample;
    peer.smoothedRoundTrip = peer.roundTripSamples == 0
                                 ? sample
                                 : peer.smoothedRoundTrip + (sample - peer.smoothedRoundTrip) / 8;
    ++peer.roundTripSamples;
    qCDebug(lcWorld) << "heartbeat" << nonce << "round trip" << sample.count() << "us";
}

std::chrono::microseconds FailureDetector::Peer::minRoundTrip() const
{
    if (roundTripSamples == 0)
        return microseconds(-1);
    const auto kept = std::min<quint64>(roundTripSamples, recentRoundTrips.size());
    return *std::min_element(recentRoundTrips.begin(), recentRoundTrips.begin() + qsizetype(kept));
}

// Smoothed as round trips are (RFC 6298's 1/8): one message that shared the
// radio with another does not halve the estimate a broadcast plans with.
void FailureDetector::noteSendRate(int rank, double bytesPerSecond)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end() || !(bytesPerSecond > 0))
        return;
    it->sendRate = it->sendRateSamples == 0 ? bytesPerSecond : it->sendRate + (bytesPerSecond - it->sendRate) / 8;
    ++it->sendRateSamples;
    qCDebug(lcWorld) << "send rate to rank" << rank << qint64(bytesPerSecond) << "B/s";
}

bool FailureDetector::reportDue(const Peer &peer, TimePoint now)
{
    if (peer.reportedToPeer <= 0)
        return true;
    return std::abs(peer.arrivalRate - peer.reportedToPeer) > peer.reportedToPeer * ReportChange
           && now - peer.reportedAt >= ReportEvery;
}

std::optional<Frame> FailureDetector::noteArrivalRate(int rank, double bytesPerSecond, TimePoint now)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.find(rank);
    if (it == m_peers.end() || !isTimed(*it) || !(bytesPerSecond >= 1))
        return std::nullopt;
    Peer &peer = *it;
    peer.recentArrivalRates[peer.arrivalRateSamples % peer.recentArrivalRates.size()] = bytesPerSecond;
    ++peer.arrivalRateSamples;
    const auto kept = std::min<quint64>(peer.arrivalRateSamples, peer.recentArrivalRates.size());
    peer.arrivalRate = *std::max_element(peer.recentArrivalRates.begin(), peer.recentArrivalRates.begin() + qsizetype(kept));
    if (!m_sending || !reportDue(peer, now))
        return std::nullopt;
    peer.reportedToPeer = peer.arrivalRate;
    peer.reportedAt = now;
    ++peer.heartbeatFrames;
    qCDebug(lcWorld) << "frames from rank" << rank << "arrive at" << qint64(peer.arrivalRate) << "B/s; telling it";
    return makeHeartbeat(m_ownRank, rank, HeartbeatType::RateReport, quint64(peer.arrivalRate));
}

std::optional<LinkQuality> FailureDetector::quality(int rank, TimePoint now) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_peers.constFind(rank);
    if (it == m_peers.constEnd())
        return std::nullopt;
    LinkQuality q;
    q.rank = rank;
    q.status = it->status;
    q.sinceHeard = milliseconds(std::max<qint64>(0, msBetween(it->lastHeard, now)));
    q.roundTrip = it->roundTrip;
    q.smoothedRoundTrip = it->smoothedRoundTrip;
    q.minRoundTrip = it->minRoundTrip();
    q.roundTripSamples = it->roundTripSamples;
    q.heartbeatsSent = it->requestsSent;
    q.heartbeatsReceived = it->requestsReceived;
    q.sendRate = it->sendRate;
    q.sendRateSamples = it->sendRateSamples;
    q.arrivalRate = it->arrivalRate;
    q.arrivalRateSamples = it->arrivalRateSamples;
    q.peerArrivalRate = it->peerArrivalRate;
    q.peerArrivalRateReports = it->peerArrivalRateReports;
    return q;
}

Frame FailureDetector::makeHeartbeat(int source, int destination, HeartbeatType type, quint64 nonce)
{
    return heartbeatFrame(source, destination, type, nonce, 0);
}

Frame FailureDetector::makeRateProbe(int source, int destination)
{
    return heartbeatFrame(source, destination, HeartbeatType::RateProbe, quint64(RateProbePadding), RateProbePadding);
}

Frame FailureDetector::heartbeatFrame(int source, int destination, HeartbeatType type, quint64 nonce,
                                      qsizetype padding)
{
    QByteArray payload(PayloadSize + padding, '\0');
    payload[0] = char(type);
    qToBigEndian<quint64>(nonce, payload.data() + 1);
    Frame frame = makeFrame(FrameKind::Heartbeat, ItemType::UnsignedByte, quint32(payload.size()), payload);
    frame.header.source = source;
    frame.header.destination = destination;
    return frame;
}

} // namespace mmpi::detail
