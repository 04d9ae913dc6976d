// The sim transport's real plugin, in this process over local sockets: its
// profiles and option errors, transfers timed against the profile (bandwidth
// counts header and payload, latency is added once per frame), one radio shared
// by every peer, order, closing, the queue limit, and each scripted fault. The
// "terminates" fault runs in a child: this same binary, started with
// MMPI_TST_SIM_CHILD. Timing checks are strict below (the simulation never
// delivers early) and generous above (a loaded machine delivers late).
#include "transporttest.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <cstdio>

using namespace mmpi;
using namespace mmpi::test;

namespace {

constexpr qint64 NsPerMs = 1000000;
constexpr qint64 NsPerS = 1000000000;
// How late a delivery may be on a busy two-core machine before we call it wrong.
constexpr qint64 SlackNs = 1000 * NsPerMs;
const char *const ChildVariable = "MMPI_TST_SIM_CHILD";

// A Data frame of exactly `size` bytes on the wire, header included, whose
// payload bytes and sequence number identify it.
Frame sizedFrame(quint64 sequence, qint64 size)
{
    const qint64 payload = size - FrameHeaderSize;
    Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload),
                            QByteArray(payload, char(sequence % 128)));
    frame.header.sequence = sequence;
    frame.header.tag = 7;
    return frame;
}

// Frames a link received and when, on a clock shared with the test.
struct Receiver
{
    QList<Frame> frames;
    QList<qint64> arrivalNs;

    void attach(Link *link, QElapsedTimer clock)
    {
        QObject::connect(link, &Link::frameReceived, link, [this, clock](const Frame &frame) {
            frames << frame;
            arrivalNs << clock.nsecsElapsed();
        });
    }
    // Whether the frames are 0, 1, 2, ... of the given sizes.
    bool inOrder(const QList<qint64> &sizes) const
    {
        if (frames.size() != sizes.size())
            return false;
        for (qsizetype i = 0; i < frames.size(); ++i) {
            const Frame &f = frames[i];
            if (f.header.sequence != quint64(i) || FrameHeaderSize + f.payload.size() != sizes[i]
                || f.payload != QByteArray(sizes[i] - FrameHeaderSize, char(i % 128)))
                return false;
        }
        return true;
    }
};

// Runs the event loop until `done` (or the timeout). Not QTest::qWaitFor: it
// sleeps 10 ms between passes, which would make every timed delivery late.
template<typename Predicate>
bool waitFor(Predicate done, int timeoutMs = Timeout)
{
    if (done())
        return true;
    QEventLoop loop;
    QTimer poll;
    poll.setTimerType(Qt::PreciseTimer);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done())
            loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    poll.start(1);
    loop.exec();
    return done();
}

double ms(qint64 ns)
{
    return double(ns) / double(NsPerMs);
}

// A built-in profile's options.
QVariantMap profile(const char *name)
{
    return {{QStringLiteral("link"), QString::fromLatin1(name)}};
}

// The fault option as JSON hands it over: a list of strings.
QVariantMap faultOptions(int rank, const QString &fault)
{
    return {{QStringLiteral("link"), QStringLiteral("ideal")},
            {QStringLiteral("rank"), rank},
            {QStringLiteral("faults"), QStringList{fault}}};
}

// Child mode: a sim node configured from MMPI_TST_SIM_CHILD (JSON) that
// listens and waits for its faults; it gives up after 10 s.
int runChild(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QVariantMap options =
        QJsonDocument::fromJson(qgetenv(ChildVariable)).object().toVariantMap();
    auto transport = makeTransport(QStringLiteral("sim"), options);
    if (!transport)
        return 2;
    auto address = transport->listen(QString());
    if (!address)
        return 2;
    std::printf("listening at %s\n", qPrintable(*address));
    std::fflush(stdout);
    QTimer::singleShot(Timeout, &app, [] { QCoreApplication::exit(3); });
    return app.exec();
}

} // namespace

class tst_Sim : public QObject
{
    Q_OBJECT

private:
    void listenOn(Transport *transport);
    void connectLinks(Transport *from, Transport *to, QPointer<Link> &out, QPointer<Link> &in);
    // Makes both transports and connects the client to the listening server;
    // on failure the test has failed (QTest::currentTestFailed()).
    void connectPair(LinkPair &pair, const QVariantMap &server, const QVariantMap &client);
    // Connects and waits for the outcome; true if it connected.
    bool tryConnect(Transport *from, const QString &address, Error &error);
    // Connects, and the other end drops the link at once without a frame.
    bool connectIsDropped(Transport *from, const QString &address);

private Q_SLOTS:
    void profiles_data();
    void profiles();
    void optionErrors_data();
    void optionErrors();
    void badAddresses();
    void discoveryReportsSimAddresses();

    void transferMatchesBluetoothProfile();
    void smallFrameTakesTheLatency();
    void oneRadioForAllPeers();
    void framesStayInOrderBothWays();
    void idealIsUnshaped();
    void closeSendsQueuedFramesFirst();
    void fullQueueFailsTheLink();
    void pausedReadingHoldsFrames();

    void ioErrorBreaksLinks();
    void faultsOfOtherRanksAreIgnored();
    void outOfRangeDropsConnectsUntilItEnds();
    void terminatesKillsTheProcess();
};

void tst_Sim::listenOn(Transport *transport)
{
    QVERIFY(transport);
    auto address = transport->listen(QString());
    QVERIFY2(address, why(address).constData());
    QVERIFY(address->startsWith(QStringLiteral("sim://")));
}

void tst_Sim::connectLinks(Transport *from, Transport *to, QPointer<Link> &out, QPointer<Link> &in)
{
    QSignalSpy incoming(to, &Transport::incomingLink);
    auto link = from->connectTo(to->listenAddress());
    QVERIFY2(link, why(link).constData());
    out = *link;
    QCOMPARE(out->peerAddress(), to->listenAddress());
    QTRY_VERIFY_WITH_TIMEOUT(out && out->state() == Link::State::Connected, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(!incoming.isEmpty(), Timeout);
    in = incoming.last().at(0).value<Link *>();
    QVERIFY(in && in->state() == Link::State::Connected);
    QVERIFY(in->peerAddress().startsWith(QStringLiteral("sim://")));
}

void tst_Sim::connectPair(LinkPair &pair, const QVariantMap &server, const QVariantMap &client)
{
    pair.server = makeTransport(QStringLiteral("sim"), server);
    pair.client = makeTransport(QStringLiteral("sim"), client);
    QVERIFY(pair.server && pair.client);
    listenOn(pair.server.get());
    if (QTest::currentTestFailed())
        return;
    pair.address = pair.server->listenAddress();
    connectLinks(pair.client.get(), pair.server.get(), pair.connecting, pair.accepted);
}

bool tst_Sim::tryConnect(Transport *from, const QString &address, Error &error)
{
    auto link = from->connectTo(address);
    if (!link) {
        error = link.error();
        return false;
    }
    QPointer<Link> pending = *link;
    if (!QTest::qWaitFor([&] { return !pending || pending->state() != Link::State::Connecting; }, Timeout)
        || !pending)
        return false;
    error = pending->error();
    const bool connected = pending->state() == Link::State::Connected;
    pending->close();
    pending->deleteLater();
    return connected;
}

bool tst_Sim::connectIsDropped(Transport *from, const QString &address)
{
    auto link = from->connectTo(address);
    if (!link)
        return false;
    QPointer<Link> pending = *link;
    QSignalSpy frames(pending.data(), &Link::frameReceived);
    const bool closed = QTest::qWaitFor([&] { return !pending || pending->state() == Link::State::Closed; }, Timeout);
    if (pending)
        pending->deleteLater();
    return closed && frames.isEmpty();
}

void tst_Sim::profiles_data()
{
    QTest::addColumn<QVariantMap>("options");
    QTest::addColumn<QString>("link");
    QTest::addColumn<qint64>("latencyMs");
    QTest::addColumn<qint64>("bandwidth");
    const QString link = QStringLiteral("link");
    QTest::newRow("default is bluetooth") << QVariantMap{} << "bluetooth" << 30LL << 90000LL;
    QTest::newRow("bluetooth") << QVariantMap{{link, "bluetooth"}} << "bluetooth" << 30LL << 90000LL;
    QTest::newRow("bluetooth-edr") << QVariantMap{{link, "bluetooth-edr"}} << "bluetooth-edr" << 10LL << 250000LL;
    QTest::newRow("wifi") << QVariantMap{{link, "wifi"}} << "wifi" << 2LL << 5000000LL;
    QTest::newRow("ideal") << QVariantMap{{link, "ideal"}} << "ideal" << 0LL << 0LL;
    QTest::newRow("latency overridden") << QVariantMap{{link, "wifi"}, {QStringLiteral("latencyMs"), 7}}
                                        << "wifi" << 7LL << 5000000LL;
    QTest::newRow("bandwidth as text, as from JSON")
        << QVariantMap{{QStringLiteral("bandwidth"), "1000"}} << "bluetooth" << 30LL << 1000LL;
    QTest::newRow("unlimited bandwidth with latency")
        << QVariantMap{{link, "bluetooth"}, {QStringLiteral("bandwidth"), 0.0}} << "bluetooth" << 30LL << 0LL;
}

void tst_Sim::profiles()
{
    QFETCH(QVariantMap, options);
    QFETCH(QString, link);
    QFETCH(qint64, latencyMs);
    QFETCH(qint64, bandwidth);
    auto transport = makeTransport(QStringLiteral("sim"), options);
    QVERIFY(transport);
    QCOMPARE(transport->name(), QStringLiteral("sim"));
    QCOMPARE(transport->property("link").toString(), link);
    QCOMPARE(transport->property("latencyMs").toLongLong(), latencyMs);
    QCOMPARE(transport->property("bandwidth").toLongLong(), bandwidth);
    QCOMPARE(transport->property("queueLimit").toLongLong(), 64LL * 1024 * 1024);
}

void tst_Sim::optionErrors_data()
{
    QTest::addColumn<QVariantMap>("options");
    QTest::addColumn<QString>("expected");
    const QString faults = QStringLiteral("faults");
    const QString rank = QStringLiteral("rank");
    const auto fault = [&](const char *text) { return QVariantMap{{rank, 0}, {faults, QString::fromLatin1(text)}}; };

    QTest::newRow("unknown profile") << QVariantMap{{QStringLiteral("link"), "carrier-pigeon"}}
                                     << "option 'link' of transport sim: unknown link profile 'carrier-pigeon' "
                                        "(known: bluetooth, bluetooth-edr, wifi, ideal)";
    QTest::newRow("negative latency") << QVariantMap{{QStringLiteral("latencyMs"), -1}}
                                      << "option 'latencyMs' of transport sim: -1 is outside 0..60000";
    QTest::newRow("fractional latency") << QVariantMap{{QStringLiteral("latencyMs"), 1.5}}
                                        << "option 'latencyMs' of transport sim: expected an integer";
    QTest::newRow("bandwidth as a word") << QVariantMap{{QStringLiteral("bandwidth"), "fast"}}
                                         << "option 'bandwidth' of transport sim: expected an integer, got 'fast'";
    QTest::newRow("tiny queue") << QVariantMap{{QStringLiteral("queueLimit"), 10}}
                                << "option 'queueLimit' of transport sim: 10 is outside";
    QTest::newRow("unknown key") << QVariantMap{{QStringLiteral("colour"), "blue"}}
                                 << "transport sim has no option 'colour' (known: bandwidth, discoveryDir,";
    QTest::newRow("rank out of range") << QVariantMap{{rank, 5000}} << "option 'rank' of transport sim: 5000 is outside";
    QTest::newRow("faults without rank")
        << QVariantMap{{faults, "rank 1 io-error at 2s"}}
        << "option 'faults' of transport sim: fault events need this node's rank: set the option 'rank'";
    QTest::newRow("faults not strings") << QVariantMap{{rank, 0}, {faults, 42}} << "option 'faults' of transport sim: expected a list";
    QTest::newRow("no rank word") << fault("node 1 io-error at 2s") << "fault 'node 1 io-error at 2s': not of the form";
    QTest::newRow("rank not a number") << fault("rank two io-error at 2s") << "'two' is not a rank 0..4095";
    QTest::newRow("signed rank") << fault("rank +1 io-error at 2s") << "'+1' is not a rank 0..4095";
    QTest::newRow("unknown event") << fault("rank 1 explodes at 2s") << "unknown event 'explodes'";
    QTest::newRow("time without unit") << fault("rank 1 io-error at 2") << "the time '2' is not a time like 3s";
    QTest::newRow("negative time") << fault("rank 1 io-error at -2s") << "the time '-2s' is negative";
    QTest::newRow("unit with a space") << fault("rank 1 io-error at 2 s") << "the time '2' is not a time";
    QTest::newRow("more than a day") << fault("rank 1 terminates at 90000s") << "longer than a day";
    QTest::newRow("out of range without for") << fault("rank 1 out-of-range at 2s") << "out-of-range needs 'for <time>'";
    QTest::newRow("zero duration") << fault("rank 1 out-of-range at 2s for 0ms") << "duration must be longer than 0";
    QTest::newRow("for on io-error") << fault("rank 1 io-error at 2s for 3s") << "unexpected 'for 3s' after the time";
    QTest::newRow("rank beyond the world")
        << QVariantMap{{rank, 0}, {QStringLiteral("worldSize"), 2}, {faults, "rank 2 io-error at 1s"}}
        << "fault 'rank 2 io-error at 1s' names rank 2, but the world has 2 node(s)";
    QTest::newRow("bad second fault")
        << QVariantMap{{rank, 0}, {faults, QStringList{"rank 1 io-error at 1s", "rank 1 io-eror at 2s"}}}
        << "unknown event 'io-eror'";
}

void tst_Sim::optionErrors()
{
    QFETCH(QVariantMap, options);
    QFETCH(QString, expected);
    auto transport = makeTransport(QStringLiteral("sim"), profile("wifi"));
    QVERIFY(transport);
    const auto configured = transport->configure(options);
    QVERIFY(!configured);
    QCOMPARE(configured.error().code, ErrorCode::BadConfiguration);
    if (!configured.error().message.contains(expected))
        QFAIL(qPrintable(configured.error().message));
    // A bad map changes nothing.
    QCOMPARE(transport->property("link").toString(), QStringLiteral("wifi"));
    QCOMPARE(transport->property("latencyMs").toLongLong(), 2LL);
    QCOMPARE(transport->property("bandwidth").toLongLong(), 5000000LL);
    QCOMPARE(transport->property("rank").toInt(), -1);
}

void tst_Sim::badAddresses()
{
    auto transport = makeTransport(QStringLiteral("sim"));
    QVERIFY(transport);
    for (const QString &address : {QStringLiteral("local://mmpi-x"), QStringLiteral("sim://"),
                                   QStringLiteral("sim://a/b"), QStringLiteral("tcp://127.0.0.1:1")}) {
        auto link = transport->connectTo(address);
        QVERIFY(!link);
        QCOMPARE(link.error().code, ErrorCode::BadAddress);
        if (!link.error().message.contains(QStringLiteral("sim address")))
            QFAIL(qPrintable(link.error().message));
        QVERIFY(!transport->listen(address));
    }
}

void tst_Sim::discoveryReportsSimAddresses()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QVariantMap options{{QStringLiteral("link"), QStringLiteral("ideal")},
                              {QStringLiteral("discoveryDir"), dir.path()},
                              {QStringLiteral("discoveryInterval"), 20}};
    auto node = makeTransport(QStringLiteral("sim"), options);
    auto root = makeTransport(QStringLiteral("sim"), options);
    QVERIFY(node && root);
    QVERIFY(node->supportsDiscovery());
    listenOn(node.get());
    const PeerAdvert advert{QStringLiteral("blue"), QStringLiteral("node-1"), node->listenAddress()};
    auto advertised = node->advertise(advert);
    QVERIFY2(advertised, why(advertised).constData());
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    auto started = root->startDiscovery(QStringLiteral("blue"));
    QVERIFY2(started, why(started).constData());
    QTRY_VERIFY_WITH_TIMEOUT(!found.isEmpty(), Timeout);
    QCOMPARE(found.at(0).at(0).value<PeerAdvert>(), advert);
    // What was found can be reached.
    QPointer<Link> out, in;
    connectLinks(root.get(), node.get(), out, in);
    root->stopDiscovery();
    node->stopAdvertising();
}

// The issue's own example: 90 kB at the bluetooth profile's 90 kB/s takes one
// second plus the 30 ms latency.
void tst_Sim::transferMatchesBluetoothProfile()
{
    Receiver got;
    LinkPair pair;
    connectPair(pair, profile("bluetooth"), profile("bluetooth"));
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    QSignalSpy written(out.data(), &Link::bytesWritten);

    constexpr int Frames = 9;
    constexpr qint64 FrameSize = 10000;
    QElapsedTimer clock;
    clock.start();
    got.attach(in, clock);
    for (int i = 0; i < Frames; ++i)
        out->sendFrame(sizedFrame(i, FrameSize));
    // Header and payload both count, and nothing has left the radio yet.
    QCOMPARE(out->bytesToWrite(), Frames * FrameSize);
    QCOMPARE(out->counters().framesSent, quint64(Frames));

    QVERIFY(waitFor([&] { return got.frames.size() == Frames; }));
    QVERIFY(got.inOrder(QList<qint64>(Frames, FrameSize)));
    const qint64 latency = 30 * NsPerMs;
    for (int i = 0; i < Frames; ++i) {
        // Frame i is complete once i + 1 frames have crossed at 90000 bytes/s.
        const qint64 expected = (i + 1) * FrameSize * NsPerS / 90000 + latency;
        if (got.arrivalNs[i] < expected || got.arrivalNs[i] > expected + SlackNs)
            QFAIL(qPrintable(QStringLiteral("frame %1 arrived after %2 ms, expected %3 ms")
                                 .arg(i).arg(ms(got.arrivalNs[i])).arg(ms(expected))));
    }
    qInfo("90000 bytes at the bluetooth profile: %.1f ms (expected 1030.0 ms)", ms(got.arrivalNs.last()));
    QTRY_COMPARE_WITH_TIMEOUT(out->bytesToWrite(), qint64(0), Timeout);
    QVERIFY(!written.isEmpty());
    QCOMPARE(out->counters().bytesSent, quint64(Frames * FrameSize));
    QCOMPARE(in->counters().framesReceived, quint64(Frames));
    QCOMPARE(in->counters().bytesReceived, quint64(Frames * FrameSize));
}

// Both directions are shaped, each by its sender: a round trip of a small
// frame is two latencies and two transmissions.
void tst_Sim::smallFrameTakesTheLatency()
{
    QElapsedTimer clock;
    Receiver replies;
    LinkPair pair;
    connectPair(pair, profile("bluetooth"), profile("bluetooth"));
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    connect(in, &Link::frameReceived, in, [echo = in](const Frame &frame) { echo->sendFrame(frame); });
    clock.start();
    replies.attach(out, clock);

    constexpr qint64 Size = 100;
    const qint64 oneWay = 30 * NsPerMs + Size * NsPerS / 90000;
    QList<double> rtts;
    for (int i = 0; i < 5; ++i) {
        const qint64 sent = clock.nsecsElapsed();
        out->sendFrame(sizedFrame(quint64(i), Size));
        QVERIFY(waitFor([&] { return replies.frames.size() == i + 1; }));
        const qint64 rtt = replies.arrivalNs.last() - sent;
        if (rtt < 2 * oneWay || rtt > 2 * oneWay + SlackNs)
            QFAIL(qPrintable(QStringLiteral("round trip %1 ms, expected %2 ms").arg(ms(rtt)).arg(ms(2 * oneWay))));
        rtts << ms(rtt);
    }
    std::sort(rtts.begin(), rtts.end());
    qInfo("%lld-byte round trip at the bluetooth profile: median %.2f ms (expected %.2f ms)", Size, rtts[2],
          ms(2 * oneWay));
}

// A node has one radio: sending to two peers at once takes the sum of both
// transfers, not the longer of them.
void tst_Sim::oneRadioForAllPeers()
{
    Receiver atB, atC;
    auto a = makeTransport(QStringLiteral("sim"), {{QStringLiteral("latencyMs"), 10},
                                                   {QStringLiteral("bandwidth"), 1000000}});
    auto b = makeTransport(QStringLiteral("sim"), profile("ideal"));
    auto c = makeTransport(QStringLiteral("sim"), profile("ideal"));
    QVERIFY(a && b && c);
    listenOn(b.get());
    listenOn(c.get());
    QPointer<Link> toB, fromA1, toC, fromA2;
    connectLinks(a.get(), b.get(), toB, fromA1);
    connectLinks(a.get(), c.get(), toC, fromA2);
    if (QTest::currentTestFailed())
        return;

    constexpr int Frames = 20;
    constexpr qint64 FrameSize = 10000;
    QElapsedTimer clock;
    clock.start();
    atB.attach(fromA1, clock);
    atC.attach(fromA2, clock);
    for (int i = 0; i < Frames; ++i) {
        toB->sendFrame(sizedFrame(i, FrameSize));
        toC->sendFrame(sizedFrame(i, FrameSize));
    }
    QVERIFY(waitFor([&] { return atB.frames.size() == Frames && atC.frames.size() == Frames; }));
    QVERIFY(atB.inOrder(QList<qint64>(Frames, FrameSize)));
    QVERIFY(atC.inOrder(QList<qint64>(Frames, FrameSize)));
    // Alternating on one radio, B's last frame is the 39th to go out and C's
    // the 40th: 390 and 400 ms of air time. Two radios would finish both by 200.
    const qint64 lastB = 2 * Frames - 1;
    const qint64 expectedB = lastB * FrameSize * NsPerS / 1000000 + 10 * NsPerMs;
    const qint64 expectedC = 2 * Frames * FrameSize * NsPerS / 1000000 + 10 * NsPerMs;
    if (atB.arrivalNs.last() < expectedB || atC.arrivalNs.last() < expectedC
        || atC.arrivalNs.last() > expectedC + SlackNs)
        QFAIL(qPrintable(QStringLiteral("B done after %1 ms (expected %2), C after %3 ms (expected %4)")
                             .arg(ms(atB.arrivalNs.last())).arg(ms(expectedB))
                             .arg(ms(atC.arrivalNs.last())).arg(ms(expectedC))));
    qInfo("2 x 200000 bytes to two peers at 1 MB/s + 10 ms: %.1f ms (expected %.1f ms; two radios: 210 ms)",
          ms(atC.arrivalNs.last()), ms(expectedC));
}

void tst_Sim::framesStayInOrderBothWays()
{
    Receiver atServer, atClient;
    const QVariantMap fast{{QStringLiteral("latencyMs"), 3}, {QStringLiteral("bandwidth"), 20000000}};
    LinkPair pair;
    connectPair(pair, fast, fast);
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    QElapsedTimer clock;
    clock.start();
    atServer.attach(in, clock);
    atClient.attach(out, clock);
    QList<qint64> sizes;
    for (int i = 0; i < 300; ++i)
        sizes << FrameHeaderSize + QRandomGenerator::global()->bounded(30000);
    for (int i = 0; i < sizes.size(); ++i) {
        out->sendFrame(sizedFrame(i, sizes[i]));
        in->sendFrame(sizedFrame(i, sizes[i]));
    }
    QTRY_VERIFY_WITH_TIMEOUT(atServer.frames.size() == sizes.size() && atClient.frames.size() == sizes.size(),
                             Timeout);
    QVERIFY(atServer.inOrder(sizes));
    QVERIFY(atClient.inOrder(sizes));
}

void tst_Sim::idealIsUnshaped()
{
    Receiver got;
    LinkPair pair;
    connectPair(pair, profile("ideal"), profile("ideal"));
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    QElapsedTimer clock;
    clock.start();
    got.attach(in, clock);
    // 5 MiB and 100 small frames: 58 s at the bluetooth profile, 1 s at wifi.
    QList<qint64> sizes{5 * 1024 * 1024};
    for (int i = 0; i < 100; ++i)
        sizes << 100;
    for (int i = 0; i < sizes.size(); ++i)
        out->sendFrame(sizedFrame(i, sizes[i]));
    QTRY_COMPARE_WITH_TIMEOUT(got.frames.size(), sizes.size(), Timeout);
    QVERIFY(got.inOrder(sizes));
    qInfo("5 MiB and 100 small frames over ideal: %.1f ms", ms(got.arrivalNs.last()));
}

// close() keeps the Link contract: frames already sent still go out, shaped,
// even though the link is deleted at once.
void tst_Sim::closeSendsQueuedFramesFirst()
{
    Receiver got;
    LinkPair pair;
    connectPair(pair, profile("ideal"), {{QStringLiteral("latencyMs"), 20},
                                         {QStringLiteral("bandwidth"), 200000}});
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    QElapsedTimer clock;
    clock.start();
    got.attach(in, clock);
    const QList<qint64> sizes(10, 2000);
    for (int i = 0; i < sizes.size(); ++i)
        out->sendFrame(sizedFrame(i, sizes[i]));
    QVERIFY(out->bytesToWrite() > 0);
    out->close();
    QCOMPARE(out->state(), Link::State::Closed);
    out->sendFrame(sizedFrame(99, 100)); // ignored: closed
    out->deleteLater();
    QTRY_VERIFY_WITH_TIMEOUT(in->state() == Link::State::Closed, Timeout);
    QVERIFY(got.inOrder(sizes));
    // 20000 bytes at 200000 bytes/s, then 20 ms.
    QVERIFY(got.arrivalNs.last() >= 120 * NsPerMs);
    QVERIFY(!in->error().isError());
}

void tst_Sim::fullQueueFailsTheLink()
{
    LinkPair pair;
    connectPair(pair, profile("ideal"), {{QStringLiteral("bandwidth"), 1000},
                                         {QStringLiteral("queueLimit"), 65536}});
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    QSignalSpy errors(out.data(), &Link::errorOccurred);
    // Six frames of 10000 bytes fit in 65536; the seventh does not.
    for (int i = 0; i < 6; ++i)
        out->sendFrame(sizedFrame(i, 10000));
    QCOMPARE(out->state(), Link::State::Connected);
    QCOMPARE(out->bytesToWrite(), 60000LL);
    out->sendFrame(sizedFrame(6, 10000));
    QCOMPARE(out->state(), Link::State::Closed);
    QCOMPARE(errors.size(), 1);
    const Error error = errors.at(0).at(0).value<Error>();
    QCOMPARE(error.code, ErrorCode::LinkError);
    if (!error.message.contains(QStringLiteral("queueLimit")))
        QFAIL(qPrintable(error.message));
    // The broken link's frames are gone; the peer sees the link close.
    QTRY_VERIFY_WITH_TIMEOUT(in->state() == Link::State::Closed, Timeout);
}

// setReading(false) reaches the socket underneath, so the receiver's flow
// control works over sim as over local.
void tst_Sim::pausedReadingHoldsFrames()
{
    Receiver got;
    LinkPair pair;
    connectPair(pair, profile("ideal"), profile("wifi"));
    if (QTest::currentTestFailed())
        return;
    const QPointer<Link> out = pair.connecting, in = pair.accepted;
    QElapsedTimer clock;
    clock.start();
    got.attach(in, clock);
    in->setReading(false);
    const QList<qint64> sizes(5, 1000);
    for (int i = 0; i < sizes.size(); ++i)
        out->sendFrame(sizedFrame(i, sizes[i]));
    QTest::qWait(200);
    QVERIFY(got.frames.isEmpty());
    in->setReading(true);
    QTRY_COMPARE_WITH_TIMEOUT(got.frames.size(), sizes.size(), Timeout);
    QVERIFY(got.inOrder(sizes));
}

void tst_Sim::ioErrorBreaksLinks()
{
    QElapsedTimer clock;
    clock.start();
    QList<qint64> failedAt;
    QList<Error> errors;
    Receiver got;
    const qint64 faultMs = 600;
    Receiver cut;
    // 10000 bytes/s: 20 frames of 1000 bytes need 2 s, so the fault cuts them off.
    QVariantMap options = faultOptions(1, QStringLiteral("rank 1 io-error at 600ms"));
    options.insert(QStringLiteral("link"), QStringLiteral("bluetooth"));
    options.insert(QStringLiteral("bandwidth"), 10000);
    auto a = makeTransport(QStringLiteral("sim"), options);
    auto b = makeTransport(QStringLiteral("sim"), profile("ideal"));
    QVERIFY(a && b);
    QCOMPARE(a->property("faults").toStringList(), QStringList{QStringLiteral("rank 1 io-error at 600ms")});
    listenOn(a.get());
    listenOn(b.get());
    QPointer<Link> aToB, bFromA, bToA, aFromB;
    connectLinks(a.get(), b.get(), aToB, bFromA);
    connectLinks(b.get(), a.get(), bToA, aFromB);
    if (QTest::currentTestFailed())
        return;
    if (clock.elapsed() >= faultMs)
        QSKIP("setting up took longer than the time of the fault");

    cut.attach(bFromA, clock);
    for (int i = 0; i < 20; ++i)
        aToB->sendFrame(sizedFrame(i, 1000));
    for (Link *link : {aToB.data(), aFromB.data()})
        connect(link, &Link::errorOccurred, link, [&](const Error &error) {
            errors << error;
            failedAt << clock.elapsed();
        });
    QTRY_VERIFY_WITH_TIMEOUT(aToB->state() == Link::State::Closed && aFromB->state() == Link::State::Closed, Timeout);
    QCOMPARE(errors.size(), 2);
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(errors[i].code, ErrorCode::LinkError);
        if (!errors[i].message.contains(QStringLiteral("simulated I/O error on rank 1 (fault 'rank 1 io-error at 600ms')")))
            QFAIL(qPrintable(errors[i].message));
        QVERIFY(failedAt[i] >= faultMs);
    }
    // The peer sees its ends close, and the frames still in the radio never arrive.
    QTRY_VERIFY_WITH_TIMEOUT(bFromA->state() == Link::State::Closed && bToA->state() == Link::State::Closed, Timeout);
    QVERIFY(!cut.frames.isEmpty());
    QVERIFY(cut.frames.size() < 20);
    QVERIFY(cut.inOrder(QList<qint64>(cut.frames.size(), 1000)));

    // A transient failure: the node can link again at once.
    QPointer<Link> again, againIn;
    connectLinks(a.get(), b.get(), again, againIn);
    if (QTest::currentTestFailed())
        return;
    got.attach(againIn, clock);
    again->sendFrame(sizedFrame(0, 100));
    QTRY_COMPARE_WITH_TIMEOUT(got.frames.size(), 1, Timeout);
}

void tst_Sim::faultsOfOtherRanksAreIgnored()
{
    auto a = makeTransport(QStringLiteral("sim"),
                           {{QStringLiteral("link"), QStringLiteral("ideal")},
                            {QStringLiteral("rank"), 0},
                            {QStringLiteral("faults"), QStringList{QStringLiteral("rank 1 io-error at 50ms"),
                                                                   QStringLiteral("rank 2 out-of-range at 0s for 5s")}}});
    auto b = makeTransport(QStringLiteral("sim"), profile("ideal"));
    QVERIFY(a && b);
    QCOMPARE(a->property("rank").toInt(), 0);
    QVERIFY(a->property("faults").toStringList().isEmpty());
    listenOn(a.get());
    listenOn(b.get());
    QPointer<Link> out, in;
    connectLinks(b.get(), a.get(), out, in);
    if (QTest::currentTestFailed())
        return;
    QTest::qWait(300);
    QCOMPARE(in->state(), Link::State::Connected);
    QCOMPARE(out->state(), Link::State::Connected);
}

void tst_Sim::outOfRangeDropsConnectsUntilItEnds()
{
    QElapsedTimer clock;
    clock.start();
    const qint64 startMs = 500, endMs = 2000;
    auto a = makeTransport(QStringLiteral("sim"),
                           faultOptions(2, QStringLiteral("rank 2 out-of-range at 500ms for 1.5s")));
    auto b = makeTransport(QStringLiteral("sim"), profile("ideal"));
    QVERIFY(a && b);
    listenOn(a.get());
    listenOn(b.get());
    const QString addressA = a->listenAddress();
    QPointer<Link> bToA, aFromB;
    connectLinks(b.get(), a.get(), bToA, aFromB);
    if (QTest::currentTestFailed())
        return;
    if (clock.elapsed() >= startMs)
        QSKIP("setting up took longer than the time of the fault");
    QSignalSpy errors(aFromB.data(), &Link::errorOccurred);

    // The window opens: the node's links break.
    QTRY_VERIFY_WITH_TIMEOUT(aFromB->state() == Link::State::Closed, Timeout);
    QVERIFY(clock.elapsed() >= startMs);
    QCOMPARE(errors.size(), 1);
    const Error broken = errors.at(0).at(0).value<Error>();
    QCOMPARE(broken.code, ErrorCode::LinkError);
    if (!broken.message.contains(QStringLiteral("rank 2 is out of range")))
        QFAIL(qPrintable(broken.message));
    QTRY_VERIFY_WITH_TIMEOUT(bToA->state() == Link::State::Closed, Timeout);

    // Inside it, connects from the node fail, and connects to it are dropped
    // (never refused: its app still runs, which a refusal would deny).
    Error outboundError;
    const bool inboundDropped = connectIsDropped(b.get(), addressA);
    const qint64 inboundDone = clock.elapsed();
    const bool outbound = tryConnect(a.get(), b->listenAddress(), outboundError);
    const qint64 outboundDone = clock.elapsed();
    if (outboundDone < endMs) {
        QVERIFY(inboundDropped);
        QVERIFY(!outbound);
        QCOMPARE(outboundError.code, ErrorCode::ConnectFailed);
        if (!outboundError.message.contains(QStringLiteral("rank 2 is out of range")))
            QFAIL(qPrintable(outboundError.message));
    } else {
        qWarning("the machine was too slow to try connecting inside the window (%lld, %lld ms)", inboundDone,
                 outboundDone);
    }
    QCOMPARE(a->listenAddress(), addressA);

    // After it, the node is reachable at the same address again.
    QVERIFY(QTest::qWaitFor([&] { return clock.elapsed() >= endMs; }, Timeout));
    bool back = false;
    Error error;
    QDeadlineTimer deadline(Timeout);
    while (!back && !deadline.hasExpired()) {
        back = tryConnect(b.get(), addressA, error);
        if (!back)
            QTest::qWait(20);
    }
    QVERIFY(back);
    QVERIFY(clock.elapsed() >= endMs);
    QPointer<Link> aToB, bFromA;
    connectLinks(a.get(), b.get(), aToB, bFromA);
}

void tst_Sim::terminatesKillsTheProcess()
{
    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QVariantMap options = faultOptions(3, QStringLiteral("rank 3 terminates at 300ms"));
    env.insert(QString::fromLatin1(ChildVariable),
               QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(options)).toJson(QJsonDocument::Compact)));
    child.setProcessEnvironment(env);
    QElapsedTimer clock;
    clock.start();
    child.start(QCoreApplication::applicationFilePath(), {});
    QVERIFY(child.waitForStarted(Timeout));
    QVERIFY(child.waitForFinished(2 * Timeout));
    const qint64 elapsed = clock.elapsed();
    const QString out = QString::fromUtf8(child.readAllStandardOutput());
    const QString err = QString::fromUtf8(child.readAllStandardError());
    if (child.exitStatus() != QProcess::CrashExit || child.exitCode() != SIGKILL)
        QFAIL(qPrintable(QStringLiteral("exit status %1, code %2\n%3\n%4")
                             .arg(child.exitStatus()).arg(child.exitCode()).arg(out, err)));
    QVERIFY(elapsed >= 300);
    if (!out.startsWith(QStringLiteral("listening at sim://"))
        || !err.contains(QStringLiteral("sim: rank 3 terminates now, as an app crash (fault 'rank 3 terminates at 300ms')")))
        QFAIL(qPrintable(out + err));
}

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsSet(ChildVariable))
        return runChild(argc, argv);
    QCoreApplication app(argc, argv);
    tst_Sim test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_sim.moc"
