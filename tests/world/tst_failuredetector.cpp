// FailureDetector's rules on a made-up clock: when heartbeats go, when a
// silent peer is suspect and lost, round trips, and every malformed heartbeat.
// No waiting, so each rule is checked to the millisecond.
#include "failuredetector.h"

#include <mmpi/wire/framedecoder.h>

#include <algorithm>

#include <QTest>
#include <QtEndian>

using namespace mmpi;
using namespace mmpi::detail;
using namespace std::chrono_literals;

namespace {

using TimePoint = FailureDetector::TimePoint;
using Activity = FailureDetector::Activity;

constexpr int Self = 0;
constexpr int Peer = 1;

// A peer's link whose counters the test moves by hand.
struct FakeLink
{
    quint64 framesSent = 0;
    qint64 bytesToWrite = 0;
    bool connected = true;
};

// Runs check() every `step` from `from` to `to` (inclusive), sending the
// heartbeats it asks for on `link`; returns the verdicts for Peer with the
// time of each.
QList<std::pair<TimePoint, FailureDetector::Verdict>> runChecks(FailureDetector &detector, FakeLink &link,
                                                               TimePoint from, TimePoint to,
                                                               std::chrono::milliseconds step,
                                                               const std::function<void(TimePoint)> &before = {})
{
    QList<std::pair<TimePoint, FailureDetector::Verdict>> out;
    for (TimePoint t = from; t <= to; t += step) {
        if (before)
            before(t);
        const auto verdicts = detector.check(t, [&](int) {
            return link.connected ? std::optional(Activity{link.framesSent, link.bytesToWrite}) : std::nullopt;
        });
        for (const auto &v : verdicts) {
            if (v.heartbeat)
                ++link.framesSent; // the engine queues it on the link
            out.append({t, v});
        }
    }
    return out;
}

QList<TimePoint> heartbeatTimes(const QList<std::pair<TimePoint, FailureDetector::Verdict>> &verdicts)
{
    QList<TimePoint> times;
    for (const auto &[t, v] : verdicts)
        if (v.heartbeat)
            times.append(t);
    return times;
}

quint64 nonceOf(const Frame &heartbeat)
{
    return qFromBigEndian<quint64>(heartbeat.payload.constData() + 1);
}

Frame heartbeat(FailureDetector::HeartbeatType type, quint64 nonce)
{
    return FailureDetector::makeHeartbeat(Peer, Self, type, nonce);
}

} // namespace

class TestFailureDetector : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void heartbeatFormat();
    void idlePeerGetsHeartbeatEveryInterval();
    void peersTakeTurnsInABurst();
    void trafficReplacesHeartbeats();
    void noHeartbeatBehindQueuedBytes();
    void echoesAreNotTraffic();
    void silentPeerIsSuspectThenLost();
    void heardPeerIsNoLongerSuspect();
    void stalledNodeDoesNotBlameItsPeers();
    void pausedPeerIsNotTimed();
    void roundTripFromEcho();
    void smallestRecentRoundTripIsTheLink();
    void arrivalRatesAreReportedToThePeer();
    void probeMeasuresTheFirstRoundTrip();
    void rateProbeFollowsTheFirstEcho();
    void reportedRateIsThePeersArrivalRate();
    void forgottenRequestsStillEchoValidly();
    void echoesRequests();
    void malformedHeartbeats_data();
    void malformedHeartbeats();
    void noHeartbeatsAfterGoodbye();
    void leftPeerIsNotTimedButHearsFromUs();
    void lostPeerGetsNothing();
    void disabled();
};

void TestFailureDetector::heartbeatFormat()
{
    const Frame f = FailureDetector::makeHeartbeat(3, 5, FailureDetector::HeartbeatType::Echo, 0x0102030405060708ULL);
    QCOMPARE(f.header.kind, FrameKind::Heartbeat);
    QCOMPARE(f.header.itemType, ItemType::UnsignedByte);
    QCOMPARE(f.header.count, 9u);
    QCOMPARE(f.header.source, 3);
    QCOMPARE(f.header.destination, 5);
    QCOMPARE(f.header.tag, 0);
    QCOMPARE(f.header.communicator, 0u);
    // docs/design/protocol.md: type, then the nonce big-endian.
    QCOMPARE(f.payload, QByteArray::fromHex("020102030405060708"));
    // The example in docs/design/protocol.md, byte for byte.
    const QByteArray documented = QByteArray::fromHex("4D4D5049" "01" "03" "0C" "00" "00000000"
                                                      "00000001" "00000000" "FFFFFFFF" "00000000"
                                                      "00000009" "0000000000000000" "00000009"
                                                      "02" "0000000000000005");
    QCOMPARE(encodeFrame(FailureDetector::makeHeartbeat(1, 0, FailureDetector::HeartbeatType::Echo, 5)), documented);
    // And the whole frame passes the wire layer's checks.
    FrameDecoder decoder;
    QVERIFY(decoder.feed(encodeFrame(f)));
    const auto decoded = decoder.next();
    QVERIFY(decoded && decoded->has_value());
    QCOMPARE((*decoded)->payload, f.payload);
}

void TestFailureDetector::idlePeerGetsHeartbeatEveryInterval()
{
    FailureDetector detector(100ms, 1000ms);
    QCOMPARE(detector.checkPeriod(), 25ms);
    QCOMPARE(detector.suspectAfter(), 500ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    const auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 400ms, 25ms);
    QCOMPARE(heartbeatTimes(verdicts), (QList<TimePoint>{t0 + 100ms, t0 + 200ms, t0 + 300ms, t0 + 400ms}));
    quint64 expected = 1;
    for (const auto &[t, v] : verdicts) {
        QCOMPARE(v.heartbeat->header.source, Self);
        QCOMPARE(v.heartbeat->header.destination, Peer);
        QCOMPARE(quint8(v.heartbeat->payload.at(0)), quint8(FailureDetector::HeartbeatType::Request));
        QCOMPARE(nonceOf(*v.heartbeat), expected++);
    }
    QCOMPARE(detector.quality(Peer, t0 + 400ms)->heartbeatsSent, 4u);
}

void TestFailureDetector::peersTakeTurnsInABurst()
{
    // Given three peers that went idle together
    FailureDetector detector(100ms, 100000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    for (int rank : {1, 2, 3})
        detector.watch(rank, t0, 0);
    const auto idle = [](int) { return std::optional(Activity{}); };
    // Then each interval brings a burst of three requests, and each peer
    // is first in one of three bursts
    QList<int> firsts;
    for (TimePoint t = t0 + 25ms; t <= t0 + 300ms; t += 25ms) {
        const auto verdicts = detector.check(t, idle);
        if (verdicts.isEmpty())
            continue;
        QCOMPARE(verdicts.size(), 3);
        for (const auto &v : verdicts)
            QVERIFY(v.heartbeat);
        firsts.append(verdicts.first().rank);
    }
    std::sort(firsts.begin(), firsts.end());
    QCOMPARE(firsts, (QList<int>{1, 2, 3}));
}

void TestFailureDetector::trafficReplacesHeartbeats()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    // A frame to the peer (from any thread) between every two checks, for 2 s,
    // while the peer keeps talking to us.
    auto busy = runChecks(detector, link, t0 + 25ms, t0 + 2000ms, 25ms, [&](TimePoint t) {
        ++link.framesSent;
        detector.heard(Peer, t);
    });
    QVERIFY(busy.isEmpty());
    // Quiet from 2000 on: the traffic seen last at 2000 counts as sent then.
    auto quiet = runChecks(detector, link, t0 + 2025ms, t0 + 2300ms, 25ms);
    QCOMPARE(heartbeatTimes(quiet), (QList<TimePoint>{t0 + 2100ms, t0 + 2200ms, t0 + 2300ms}));
}

void TestFailureDetector::noHeartbeatBehindQueuedBytes()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    link.bytesToWrite = 4096;
    detector.watch(Peer, t0, link.framesSent);
    QVERIFY(heartbeatTimes(runChecks(detector, link, t0 + 25ms, t0 + 300ms, 25ms)).isEmpty());
    link.bytesToWrite = 0;
    QCOMPARE(heartbeatTimes(runChecks(detector, link, t0 + 325ms, t0 + 325ms, 25ms)),
             (QList<TimePoint>{t0 + 325ms}));
}

void TestFailureDetector::echoesAreNotTraffic()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    quint64 nonce = 0;
    // The peer asks every 50 ms and this node echoes each time.
    const auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 300ms, 25ms, [&](TimePoint t) {
        if ((t - t0) % 50ms != 0ms)
            return;
        const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, ++nonce), t);
        QVERIFY(reply && reply->echo);
        ++link.framesSent;
    });
    QCOMPARE(heartbeatTimes(verdicts), (QList<TimePoint>{t0 + 100ms, t0 + 200ms, t0 + 300ms}));
}

void TestFailureDetector::silentPeerIsSuspectThenLost()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    detector.heard(Peer, t0 + 10ms);
    std::optional<TimePoint> suspect, lost;
    Error reason;
    auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 1000ms, 5ms);
    QCOMPARE(detector.quality(Peer, t0 + 1000ms)->status, World::NodeStatus::Suspect);
    verdicts += runChecks(detector, link, t0 + 1005ms, t0 + 1500ms, 5ms);
    for (const auto &[t, v] : verdicts) {
        if (v.becameSuspect) {
            QVERIFY(!suspect);
            suspect = t;
        }
        if (v.lost) {
            QVERIFY(!lost);
            lost = t;
            reason = *v.lost;
        }
    }
    QVERIFY(suspect && lost);
    QCOMPARE(*suspect, t0 + 510ms);
    QCOMPARE(*lost, t0 + 1010ms);
    QCOMPARE(reason.code, ErrorCode::NodeLost);
    QCOMPARE(reason.message,
             QStringLiteral("no frame or heartbeat from rank 1 for 1000 ms (heartbeat timeout 1000 ms)"));
    const auto q = detector.quality(Peer, t0 + 1500ms);
    QCOMPARE(q->status, World::NodeStatus::Lost);
    QCOMPARE(q->sinceHeard, 1490ms);
    // A lost peer is not sent to: it has no heartbeats after the loss.
    QCOMPARE(q->heartbeatsSent, 10u); // at 100, 200, ..., 1000
    QVERIFY(!detector.heard(Peer, t0 + 1600ms));
}

void TestFailureDetector::heardPeerIsNoLongerSuspect()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 600ms, 25ms, [&](TimePoint t) {
        if (t == t0 + 100ms)
            QVERIFY(!detector.heard(Peer, t)); // not suspect: nothing to report
    });
    QVERIFY(std::any_of(verdicts.begin(), verdicts.end(), [](const auto &p) { return p.second.becameSuspect; }));
    QVERIFY(detector.heard(Peer, t0 + 610ms));
    QVERIFY(!detector.heard(Peer, t0 + 611ms));
    QCOMPARE(detector.quality(Peer, t0 + 611ms)->status, World::NodeStatus::Alive);
    // Its clock starts again at 611: suspect at 1111, never lost before 1611.
    verdicts = runChecks(detector, link, t0 + 625ms, t0 + 1600ms, 1ms);
    QVERIFY(std::none_of(verdicts.begin(), verdicts.end(), [](const auto &p) { return bool(p.second.lost); }));
    const auto again = std::find_if(verdicts.begin(), verdicts.end(), [](const auto &p) { return p.second.becameSuspect; });
    QVERIFY(again != verdicts.end());
    QCOMPARE(again->first, t0 + 1111ms);
}

void TestFailureDetector::stalledNodeDoesNotBlameItsPeers()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    detector.heard(Peer, t0 + 200ms);
    runChecks(detector, link, t0 + 25ms, t0 + 300ms, 25ms);
    // This node did not run from 300 to 3300: its next check is 3 s late.
    auto late = runChecks(detector, link, t0 + 3300ms, t0 + 3300ms, 25ms);
    QVERIFY(std::none_of(late.begin(), late.end(), [](const auto &p) {
        return p.second.becameSuspect || p.second.lost;
    }));
    // Only the planned check period of the stall counts: the peer had been
    // silent 100 ms + 25 ms, so it is suspect 375 ms and lost 875 ms later.
    std::optional<TimePoint> suspect, lost;
    for (const auto &[t, v] : runChecks(detector, link, t0 + 3325ms, t0 + 4500ms, 25ms)) {
        if (v.becameSuspect)
            suspect = t;
        if (v.lost)
            lost = t;
    }
    QCOMPARE(suspect, std::optional(t0 + 3675ms));
    QCOMPARE(lost, std::optional(t0 + 4175ms));
}

void TestFailureDetector::pausedPeerIsNotTimed()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    detector.setReading(Peer, false, t0);
    auto paused = runChecks(detector, link, t0 + 25ms, t0 + 5000ms, 25ms);
    QVERIFY(std::none_of(paused.begin(), paused.end(), [](const auto &p) {
        return p.second.becameSuspect || p.second.lost;
    }));
    // Still sent to while paused: the peer must hear from us.
    QVERIFY(heartbeatTimes(paused).size() >= 45);
    detector.setReading(Peer, true, t0 + 5000ms);
    std::optional<TimePoint> suspect;
    for (const auto &[t, v] : runChecks(detector, link, t0 + 5025ms, t0 + 5600ms, 25ms))
        if (v.becameSuspect)
            suspect = t;
    QCOMPARE(suspect, std::optional(t0 + 5500ms));
}

void TestFailureDetector::roundTripFromEcho()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    QCOMPARE(detector.quality(Peer, t0)->roundTrip, -1us);
    auto verdicts = runChecks(detector, link, t0 + 100ms, t0 + 100ms, 25ms);
    QCOMPARE(verdicts.size(), 1);
    const quint64 first = nonceOf(*verdicts.first().second.heartbeat);
    auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, first), t0 + 137ms);
    QVERIFY(reply && reply->measured && !reply->echo);
    auto q = detector.quality(Peer, t0 + 137ms);
    QCOMPARE(q->roundTrip, 37000us);
    QCOMPARE(q->smoothedRoundTrip, 37000us);
    QCOMPARE(q->roundTripSamples, 1u);

    verdicts = runChecks(detector, link, t0 + 200ms, t0 + 200ms, 25ms);
    const quint64 second = nonceOf(*verdicts.first().second.heartbeat);
    QCOMPARE(second, first + 1);
    reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, second), t0 + 245ms);
    QVERIFY(reply && reply->measured);
    q = detector.quality(Peer, t0 + 245ms);
    QCOMPARE(q->roundTrip, 45000us);
    QCOMPARE(q->smoothedRoundTrip, 38000us); // 37 + (45 - 37) / 8
    QCOMPARE(q->minRoundTrip, 37000us);
    QCOMPARE(q->roundTripSamples, 2u);
}

void TestFailureDetector::smallestRecentRoundTripIsTheLink()
{
    FailureDetector detector(100ms, 100000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    // One echo after each heartbeat, `ms` later
    TimePoint t = t0;
    auto echoAfter = [&](int ms) {
        t += 100ms;
        const auto verdicts = runChecks(detector, link, t, t, 25ms);
        QCOMPARE(verdicts.size(), 1);
        const quint64 nonce = nonceOf(*verdicts.first().second.heartbeat);
        t += std::chrono::milliseconds(ms);
        QVERIFY(detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, nonce), t));
    };
    // Given a 30 ms link whose heartbeats now and then wait behind a
    // broadcast on the radio (800 ms)
    for (int ms : {30, 800, 31, 800, 800})
        echoAfter(ms);
    // Then the smallest recent one is the link's; the smoothed one is not
    auto q = detector.quality(Peer, t);
    QCOMPARE(q->minRoundTrip, 30000us);
    QVERIFY(q->smoothedRoundTrip > 100ms);
    // And when the link itself gets slower, 8 samples later it says so
    for (int i = 0; i < 8; ++i)
        echoAfter(90);
    q = detector.quality(Peer, t);
    QCOMPARE(q->minRoundTrip, 90000us);
    QCOMPARE(q->roundTripSamples, 13u);
}

void TestFailureDetector::probeMeasuresTheFirstRoundTrip()
{
    FailureDetector detector(100000ms, 1000000ms);
    const TimePoint t0{};
    QVERIFY(!detector.probe(Peer, t0)); // not watched
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    const auto probe = detector.probe(Peer, t0);
    QVERIFY(probe);
    QCOMPARE(quint8(probe->payload.at(0)), quint8(FailureDetector::HeartbeatType::Request));
    ++link.framesSent;
    const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, nonceOf(*probe)), t0 + 61ms);
    QVERIFY(reply && reply->measured);
    QCOMPARE(detector.quality(Peer, t0 + 61ms)->minRoundTrip, 61000us);
    // The probe is no traffic: the next heartbeat comes an interval after it
    const auto verdicts = runChecks(detector, link, t0 + 25000ms, t0 + 100000ms, 25000ms);
    QCOMPARE(heartbeatTimes(verdicts), (QList<TimePoint>{t0 + 100000ms}));
    // And a disabled detector sends none
    FailureDetector off(0ms, 0ms);
    off.start(Self, t0);
    off.watch(Peer, t0, 0);
    QVERIFY(!off.probe(Peer, t0));
}

void TestFailureDetector::rateProbeFollowsTheFirstEcho()
{
    using Type = FailureDetector::HeartbeatType;
    FailureDetector detector(100000ms, 1000000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    const auto probe = detector.probe(Peer, t0, FailureDetector::Probe::RoundTripThenRate);
    QVERIFY(probe);
    ++link.framesSent;
    // The peer's own first request, answered before any rate probe leaves
    auto reply = detector.receive(Peer, heartbeat(Type::Request, 1), t0 + 30ms);
    QVERIFY(reply && reply->echo && !reply->rateProbe);
    ++link.framesSent;
    reply = detector.receive(Peer, heartbeat(Type::Echo, nonceOf(*probe)), t0 + 61ms);
    QVERIFY(reply && reply->measured && reply->rateProbe);
    const Frame rate = *reply->rateProbe;
    QCOMPARE(rate.header.kind, FrameKind::Heartbeat);
    QCOMPARE(rate.header.source, Self);
    QCOMPARE(rate.header.destination, Peer);
    QCOMPARE(rate.payload.size(), FailureDetector::PayloadSize + FailureDetector::RateProbePadding);
    QCOMPARE(rate.header.count, quint32(rate.payload.size()));
    QCOMPARE(rate.payload.left(9), QByteArray::fromHex("040000000000002000"));
    QCOMPARE(rate.payload.mid(9), QByteArray(FailureDetector::RateProbePadding, '\0'));
    ++link.framesSent;
    // Only once; and neither it nor the echo is traffic
    const auto verdicts = runChecks(detector, link, t0 + 25000ms, t0 + 100000ms, 25000ms);
    QCOMPARE(heartbeatTimes(verdicts), (QList<TimePoint>{t0 + 100000ms}));
    reply = detector.receive(Peer, heartbeat(Type::Echo, nonceOf(*verdicts.first().second.heartbeat)), t0 + 100061ms);
    QVERIFY(reply && reply->measured && !reply->rateProbe);

    // The peer's side: a rate probe is accepted, answers nothing and measures nothing
    FailureDetector peer(100000ms, 1000000ms);
    peer.start(Peer, t0);
    peer.watch(Self, t0, 0);
    const auto heard = peer.receive(Self, rate, t0 + 150ms);
    QVERIFY2(heard, heard ? "" : qPrintable(heard.error().message));
    QVERIFY(!heard->echo && !heard->rateProbe && !heard->measured);
    QCOMPARE(peer.quality(Self, t0 + 150ms)->heartbeatsReceived, 0u);
}

void TestFailureDetector::arrivalRatesAreReportedToThePeer()
{
    using Type = FailureDetector::HeartbeatType;
    FailureDetector detector(100ms, 100000ms);
    const TimePoint t0{};
    QVERIFY(!detector.noteArrivalRate(Peer, 90000, t0)); // not watched yet
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    const auto report = [](const std::optional<Frame> &frame) -> qint64 {
        if (!frame || frame->header.kind != FrameKind::Heartbeat || quint8(frame->payload.at(0)) != quint8(Type::RateReport))
            return -1;
        return qint64(nonceOf(*frame));
    };
    // The first sample goes at once...
    QCOMPARE(report(detector.noteArrivalRate(Peer, 90000, t0 + 10ms)), 90000);
    ++link.framesSent;
    // Reports are not traffic: the idle link still gets its heartbeats.
    const auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 200ms, 25ms);
    QCOMPARE(heartbeatTimes(verdicts), (QList<TimePoint>{t0 + 100ms, t0 + 200ms}));
    // ...a higher one not within FailureDetector::ReportEvery...
    QVERIFY(!detector.noteArrivalRate(Peer, 100000, t0 + 210ms));
    // ...and then only if it moved by more than ReportChange: 100000 is 11 % more.
    QVERIFY(!detector.noteArrivalRate(Peer, 100000, t0 + 300ms));
    QCOMPARE(report(detector.noteArrivalRate(Peer, 120000, t0 + 400ms)), 120000);
    ++link.framesSent;
    // A frame that shared the peer's radio arrives at its share: the
    // highest of the last 8 samples stands...
    for (int i = 0; i < 7; ++i)
        QVERIFY(!detector.noteArrivalRate(Peer, 50000, t0 + 1000ms + i * 300ms));
    auto quality = detector.quality(Peer, t0 + 3000ms);
    QVERIFY(quality);
    QCOMPARE(quality->arrivalRateSamples, 11u);
    QCOMPARE(quality->arrivalRate, 120000.0);
    // ...until it is older than that: then the next highest is reported.
    QCOMPARE(report(detector.noteArrivalRate(Peer, 60000, t0 + 3100ms)), 60000);
    quality = detector.quality(Peer, t0 + 3100ms);
    QCOMPARE(quality->arrivalRate, 60000.0);
    QCOMPARE(quality->peerArrivalRateReports, 0u);
}

void TestFailureDetector::reportedRateIsThePeersArrivalRate()
{
    FailureDetector detector(100ms, 100000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    detector.watch(Peer, t0, 0);
    const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::RateReport, 87000), t0);
    QVERIFY(reply);
    QVERIFY(reply->measured);
    QVERIFY(!reply->echo);
    const auto quality = detector.quality(Peer, t0);
    QCOMPARE(quality->peerArrivalRate, 87000.0);
    QCOMPARE(quality->peerArrivalRateReports, 1u);
    QCOMPARE(quality->sendRateSamples, 0u);
}

void TestFailureDetector::forgottenRequestsStillEchoValidly()
{
    FailureDetector detector(100ms, 100000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    const int sent = int(FailureDetector::MaxOutstanding) + 4;
    const auto verdicts = runChecks(detector, link, t0 + 100ms, t0 + sent * 100ms, 100ms);
    QCOMPARE(heartbeatTimes(verdicts).size(), sent);
    // Request 2 was forgotten to bound memory: its echo is valid, but measures nothing.
    auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, 2), t0 + 5000ms);
    QVERIFY(reply && !reply->measured);
    reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, quint64(sent)),
                             t0 + sent * 100ms + 3ms);
    QVERIFY(reply && reply->measured);
    QCOMPARE(detector.quality(Peer, t0)->roundTrip, 3000us);
}

void TestFailureDetector::echoesRequests()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    detector.watch(Peer, t0, 0);
    const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, 5), t0);
    QVERIFY(reply && reply->echo && !reply->measured);
    QCOMPARE(reply->echo->payload, QByteArray::fromHex("020000000000000005"));
    QCOMPARE(reply->echo->header.source, Self);
    QCOMPARE(reply->echo->header.destination, Peer);
    QCOMPARE(detector.quality(Peer, t0)->heartbeatsReceived, 1u);
}

void TestFailureDetector::malformedHeartbeats_data()
{
    QTest::addColumn<Frame>("frame");
    QTest::addColumn<QString>("reason");
    using Type = FailureDetector::HeartbeatType;
    const Frame good = heartbeat(Type::Request, 7);
    auto with = [&](auto change) {
        Frame f = good;
        change(f);
        return f;
    };
    QTest::newRow("empty") << makeFrame(FrameKind::Heartbeat, ItemType::None, 0, {})
                           << "None payload of 0 bytes (expected UnsignedByte, 9 bytes)";
    QTest::newRow("short") << with([](Frame &f) { f.payload.chop(1); f.header.count = 8; })
                           << "UnsignedByte payload of 8 bytes";
    QTest::newRow("long") << with([](Frame &f) { f.payload.append('\0'); f.header.count = 10; })
                          << "UnsignedByte payload of 10 bytes";
    QTest::newRow("int items") << with([](Frame &f) { f.header.itemType = ItemType::Byte; })
                               << "Byte payload of 9 bytes";
    QTest::newRow("wrong source") << with([](Frame &f) { f.header.source = 2; }) << "claims source 2";
    QTest::newRow("wrong destination") << with([](Frame &f) { f.header.destination = 3; })
                                       << "destination 3";
    QTest::newRow("tag") << with([](Frame &f) { f.header.tag = 9; }) << "tag 9";
    QTest::newRow("communicator") << with([](Frame &f) { f.header.communicator = 4; }) << "communicator 4";
    QTest::newRow("type 0") << with([](Frame &f) { f.payload[0] = 0; }) << "unknown type 0";
    QTest::newRow("type 5") << with([](Frame &f) { f.payload[0] = 5; }) << "unknown type 5";
    QTest::newRow("rate probe, 9 bytes") << heartbeat(Type::RateProbe, 7)
                                         << "UnsignedByte payload of 9 bytes (expected UnsignedByte, 8201 bytes)";
    const Frame probe = FailureDetector::makeRateProbe(Peer, Self);
    QTest::newRow("rate probe, short") << [&] {
        Frame f = probe;
        f.payload.chop(1);
        f.header.count -= 1;
        return f;
    }() << "UnsignedByte payload of 8200 bytes (expected UnsignedByte, 8201 bytes)";
    QTest::newRow("rate probe, wrong length") << [&] {
        Frame f = probe;
        qToBigEndian<quint64>(8000, f.payload.data() + 1);
        return f;
    }() << "rate probe naming 8000 bytes of padding (it has 8192)";
    QTest::newRow("rate 0") << heartbeat(Type::RateReport, 0) << "rate report of 0 bytes per second";
    QTest::newRow("nonce 0") << heartbeat(Type::Request, 0) << "nonce 0";
    QTest::newRow("request again") << heartbeat(Type::Request, 3) << "request 3 after request 3";
    QTest::newRow("request backwards") << heartbeat(Type::Request, 2) << "request 2 after request 3";
    QTest::newRow("echo never asked") << heartbeat(Type::Echo, 9)
                                      << "echo of request 9, which was never sent (last sent: 2)";
    QTest::newRow("echo twice") << heartbeat(Type::Echo, 1) << "echo of request 1 after the echo of 1";
}

void TestFailureDetector::malformedHeartbeats()
{
    QFETCH(Frame, frame);
    QFETCH(QString, reason);
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    // History for the ordering rows: requests 1 and 2 sent, 1 echoed, 3 received.
    runChecks(detector, link, t0 + 100ms, t0 + 200ms, 100ms);
    QVERIFY(detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Echo, 1), t0 + 210ms));
    QVERIFY(detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, 3), t0 + 210ms));

    const auto reply = detector.receive(Peer, frame, t0 + 220ms);
    QVERIFY(!reply);
    QCOMPARE(reply.error().code, ErrorCode::ProtocolViolation);
    QVERIFY2(reply.error().message.startsWith(QLatin1String("bad heartbeat from rank 1: ")),
             qPrintable(reply.error().message));
    QVERIFY2(reply.error().message.contains(reason), qPrintable(reply.error().message));
}

void TestFailureDetector::noHeartbeatsAfterGoodbye()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    detector.stopSending();
    auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 400ms, 25ms, [&](TimePoint t) {
        detector.heard(Peer, t);
    });
    QVERIFY(verdicts.isEmpty());
    const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, 1), t0 + 400ms);
    QVERIFY(reply && !reply->echo);
    // Peers that have not said goodbye are still timed while this node closes.
    verdicts = runChecks(detector, link, t0 + 425ms, t0 + 1400ms, 25ms);
    QVERIFY(std::any_of(verdicts.begin(), verdicts.end(), [](const auto &p) { return bool(p.second.lost); }));
}

void TestFailureDetector::leftPeerIsNotTimedButHearsFromUs()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    QVERIFY(detector.release(Peer, World::NodeStatus::Left));
    QVERIFY(!detector.release(Peer, World::NodeStatus::Lost)); // once only
    QVERIFY(!detector.release(7, World::NodeStatus::Lost));    // never watched
    const auto verdicts = runChecks(detector, link, t0 + 25ms, t0 + 3000ms, 25ms);
    QVERIFY(std::none_of(verdicts.begin(), verdicts.end(), [](const auto &p) {
        return p.second.becameSuspect || p.second.lost;
    }));
    // It waits for our goodbye and times us meanwhile.
    QCOMPARE(heartbeatTimes(verdicts).size(), 30);
    QCOMPARE(detector.quality(Peer, t0 + 3000ms)->status, World::NodeStatus::Left);
    // Its heartbeats are still checked, but not answered.
    const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, 1), t0 + 3000ms);
    QVERIFY(reply && !reply->echo);
    QVERIFY(!detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, 0), t0 + 3000ms));
    QVERIFY(!detector.quality(7, t0));
}

void TestFailureDetector::lostPeerGetsNothing()
{
    FailureDetector detector(100ms, 1000ms);
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    QVERIFY(detector.release(Peer, World::NodeStatus::Lost));
    QVERIFY(runChecks(detector, link, t0 + 25ms, t0 + 3000ms, 25ms).isEmpty());
    QVERIFY(!detector.heard(Peer, t0 + 3000ms));
    QCOMPARE(detector.quality(Peer, t0 + 3000ms)->status, World::NodeStatus::Lost);
}

void TestFailureDetector::disabled()
{
    FailureDetector detector(0ms, 0ms);
    QVERIFY(!detector.isEnabled());
    const TimePoint t0{};
    detector.start(Self, t0);
    FakeLink link;
    detector.watch(Peer, t0, link.framesSent);
    QVERIFY(runChecks(detector, link, t0 + 1ms, t0 + 60000ms, 1000ms).isEmpty());
    QCOMPARE(detector.quality(Peer, t0 + 60000ms)->status, World::NodeStatus::Alive);
    // Requests from a peer that does send them are still answered.
    const auto reply = detector.receive(Peer, heartbeat(FailureDetector::HeartbeatType::Request, 1), t0);
    QVERIFY(reply && reply->echo);
}

QTEST_GUILESS_MAIN(TestFailureDetector)
#include "tst_failuredetector.moc"
