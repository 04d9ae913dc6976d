// Links of the real local and tcp plugins, end to end on loopback: connecting
// and accepting, frames both ways in order (many small, one of 5 MiB, every
// kind), counters, closing, and a peer that sends garbage, half a frame or an
// oversized header — which must fail that link only, with the right error.
// Sealed, the stream links carry the same frames as records.
#include "transporttest.h"

#include <mmpi/transport/sealedlink.h>
#include <mmpi/wire/framedecoder.h>
#include <mmpi/wire/recordcipher.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QPointer>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTimer>
#include <QUuid>

#ifdef Q_OS_UNIX
#include <sys/socket.h>
#ifdef Q_OS_LINUX
#include <netinet/in.h>
#include <netinet/tcp.h>
#endif
#include <sys/un.h>
#include <unistd.h>
#endif

using namespace mmpi;
using namespace mmpi::test;

namespace {

QList<Frame> receivedFrames(const QSignalSpy &spy)
{
    QList<Frame> frames;
    for (const QList<QVariant> &arguments : spy)
        frames << arguments.at(0).value<Frame>();
    return frames;
}

quint64 encodedSize(const QList<Frame> &frames)
{
    quint64 total = 0;
    for (const Frame &frame : frames)
        total += quint64(encodeFrame(frame).size());
    return total;
}

// An address nobody listens on: a port that was just free, or a server name
// that was never used.
QString deadAddress(const QString &transport)
{
    if (transport == QLatin1String("tcp")) {
        QTcpServer probe;
        if (!probe.listen(QHostAddress::LocalHost))
            return {};
        return QStringLiteral("tcp://127.0.0.1:%1").arg(probe.serverPort());
    }
    return QStringLiteral("local://mmpi-test-dead-") + QUuid::createUuid().toString(QUuid::Id128);
}

// A few valid frames of random kinds, item types and sizes (now and then
// over a megabyte, so that payloads are read in several pieces), then maybe
// one flipped byte or a cut: what a buggy or hostile peer might send.
QByteArray randomStream(QRandomGenerator &rng)
{
    static const ItemType types[] = {ItemType::Byte, ItemType::Short, ItemType::Int, ItemType::Long,
                                     ItemType::Double, ItemType::Boolean};
    QByteArray stream;
    const int frames = rng.bounded(1, 12);
    for (int i = 0; i < frames; ++i) {
        const ItemType type = types[rng.bounded(int(std::size(types)))];
        const int bytes = rng.bounded(8) == 0 ? rng.bounded(1, 1536 * 1024) : rng.bounded(0, 300);
        const quint32 count = quint32(bytes / itemSize(type));
        QByteArray payload(qsizetype(count) * itemSize(type), Qt::Uninitialized);
        for (char &c : payload)
            c = type == ItemType::Boolean ? char(rng.bounded(2)) : char(rng.bounded(256));
        Frame frame = makeFrame(FrameKind::Data, type, count, payload);
        frame.header.tag = i;
        stream += encodeFrame(frame);
    }
    switch (rng.bounded(6)) {
    case 0:
    case 1:
        stream[rng.bounded(int(stream.size()))] ^= char(1 << rng.bounded(8));
        break;
    case 2:
        stream.truncate(rng.bounded(1, int(stream.size())));
        break;
    default:
        break;
    }
    return stream;
}

} // namespace

class tst_Links : public QObject
{
    Q_OBJECT

private:
    void openPair(LinkPair &pair, const QVariantMap &serverOptions = {});
    Link *acceptRaw(LinkPair &pair, QSignalSpy &incoming, std::unique_ptr<QIODevice> &raw);
    Link *openRawPair(LinkPair &pair, std::unique_ptr<QIODevice> &raw);

private Q_SLOTS:
    void initTestCase_data();
    void connectAndAccept();
    void manyFramesBothWaysInOrder();
    void largeFrame();
    void socketBufferOptionSizesTheKernelBuffers();
    void unsentBytesCountWhatTheKernelHolds();
    void loopbackLinksUseTheirOwnCongestionControl();
    void everyFrameKind();
    void pausedLinkHoldsFramesUntilResumed();
    void peerClosingWhilePausedLosesNothing();
    void closeIsSeenByPeer();
    void framesQueuedBeforeCloseAreDelivered();
    void connectToDeadAddressFails();
    void malformedAddressIsRefused();
    void listenTwiceFails();
    void staleLocalSocketIsReplaced();
    void sendOnUnconnectedLinkIsIgnored();
    void receiverMayCloseAndDeleteLinkInSlot();
    void garbageFailsOnlyThatLink();
    void randomStreamsMatchTheDecoder();
    void halfFrameThenDisconnect();
    void frameArrivingInPiecesIsARate();
    void oversizedHeaderIsRefused();
    void frameOverConfiguredLimitIsRefused();
    void sealedLinksCarryFramesBothWays();
};

void tst_Links::openPair(LinkPair &pair, const QVariantMap &serverOptions)
{
    QFETCH_GLOBAL(QString, transport);
    pair.server = makeTransport(transport, serverOptions);
    pair.client = makeTransport(transport);
    QVERIFY(pair.server && pair.client);
    auto address = pair.server->listen(QString());
    QVERIFY2(address, why(address).constData());
    pair.address = *address;
    QCOMPARE(pair.server->listenAddress(), pair.address);

    QSignalSpy incoming(pair.server.get(), &Transport::incomingLink);
    auto link = pair.client->connectTo(pair.address);
    QVERIFY2(link, why(link).constData());
    pair.connecting = *link;
    QCOMPARE(pair.connecting->state(), Link::State::Connecting);
    QTRY_COMPARE_WITH_TIMEOUT(pair.connecting->state(), Link::State::Connected, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(incoming.size(), 1, Timeout);
    pair.accepted = incoming.at(0).at(0).value<Link *>();
    QVERIFY(pair.accepted);
    QCOMPARE(pair.accepted->state(), Link::State::Connected);
}

// Connects a raw socket to the pair's server and returns the link it made.
Link *tst_Links::acceptRaw(LinkPair &pair, QSignalSpy &incoming, std::unique_ptr<QIODevice> &raw)
{
    const qsizetype before = incoming.size();
    raw = rawConnect(pair.address);
    if (!raw)
        return nullptr;
    if (!QTest::qWaitFor([&] { return incoming.size() > before; }, Timeout))
        return nullptr;
    return incoming.last().at(0).value<Link *>();
}

// openPair(), then a raw socket connected to its server: the link that made.
Link *tst_Links::openRawPair(LinkPair &pair, std::unique_ptr<QIODevice> &raw)
{
    openPair(pair);
    if (QTest::currentTestFailed())
        return nullptr;
    QSignalSpy incoming(pair.server.get(), &Transport::incomingLink);
    return acceptRaw(pair, incoming, raw);
}

namespace {

QByteArray recordKey(char first)
{
    QByteArray key(RecordCipher::KeySize, Qt::Uninitialized);
    for (int i = 0; i < key.size(); ++i)
        key[i] = char(first + i);
    return key;
}

RecordCipher recordCipher(RecordCipher::Direction direction)
{
    auto made = RecordCipher::create(recordKey(direction == RecordCipher::Direction::ConnectorToAcceptor ? 'a' : 'A'),
                                     direction);
    if (!made)
        qFatal("cannot make a record cipher: %s", qPrintable(made.error().toString()));
    return std::move(*made);
}

} // namespace

void tst_Links::initTestCase_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("local") << QStringLiteral("local");
    QTest::newRow("tcp") << QStringLiteral("tcp");
}

void tst_Links::connectAndAccept()
{
    QFETCH_GLOBAL(QString, transport);
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(pair.address.startsWith(transport + QStringLiteral("://")));
    QCOMPARE(pair.connecting->peerAddress(), pair.address);
    QVERIFY(!pair.accepted->peerAddress().isEmpty());
    QVERIFY(!pair.connecting->error().isError());
    QVERIFY(!pair.accepted->error().isError());
    // Links are the transports' children until someone takes them.
    QCOMPARE(pair.connecting->parent(), pair.client.get());
    QCOMPARE(pair.accepted->parent(), pair.server.get());
}

void tst_Links::manyFramesBothWaysInOrder()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy atServer(pair.accepted, &Link::frameReceived);
    QSignalSpy atClient(pair.connecting, &Link::frameReceived);
    QList<Frame> up, down;
    for (int i = 0; i < 2000; ++i) {
        up << numberedFrame(quint64(i), 1 + i % 17);
        down << numberedFrame(quint64(100000 + i), 1 + i % 5);
        pair.connecting->sendFrame(up.last());
        pair.accepted->sendFrame(down.last());
    }
    QTRY_COMPARE_WITH_TIMEOUT(atServer.size(), up.size(), Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(atClient.size(), down.size(), Timeout);
    QCOMPARE(receivedFrames(atServer), up);
    QCOMPARE(receivedFrames(atClient), down);

    const LinkCounters client = pair.connecting->counters();
    const LinkCounters server = pair.accepted->counters();
    QCOMPARE(client.framesSent, quint64(up.size()));
    QCOMPARE(server.framesReceived, quint64(up.size()));
    QCOMPARE(server.framesSent, quint64(down.size()));
    QCOMPARE(client.framesReceived, quint64(down.size()));
    QCOMPARE(server.bytesReceived, encodedSize(up));
    QCOMPARE(client.bytesReceived, encodedSize(down));
    QTRY_COMPARE_WITH_TIMEOUT(pair.connecting->counters().bytesSent, encodedSize(up), Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(pair.accepted->counters().bytesSent, encodedSize(down), Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(pair.connecting->bytesToWrite(), qint64(0), Timeout);
}

void tst_Links::largeFrame()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QByteArray payload(5 * 1024 * 1024, Qt::Uninitialized);
    QRandomGenerator(42).fillRange(reinterpret_cast<quint32 *>(payload.data()), payload.size() / 4);
    const Frame big = makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload);
    const Frame after = numberedFrame(1);

    QSignalSpy atServer(pair.accepted, &Link::frameReceived);
    QSignalSpy atClient(pair.connecting, &Link::frameReceived);
    pair.connecting->sendFrame(big);
    pair.connecting->sendFrame(after);
    pair.accepted->sendFrame(big);
    QTRY_COMPARE_WITH_TIMEOUT(atServer.size(), 2, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(atClient.size(), 1, Timeout);
    QCOMPARE(receivedFrames(atServer), (QList<Frame>{big, after}));
    QCOMPARE(receivedFrames(atClient), QList<Frame>{big});
    QCOMPARE(pair.accepted->counters().bytesReceived, quint64(2 * FrameHeaderSize + payload.size() + 16));
}

// The descriptor of the socket a link reads (its device, a child), or -1.
int descriptorOf(const Link *link)
{
    if (const auto *tcp = link ? link->findChild<QAbstractSocket *>() : nullptr)
        return int(tcp->socketDescriptor());
    const auto *local = link ? link->findChild<QLocalSocket *>() : nullptr;
    return local ? int(local->socketDescriptor()) : -1;
}

// A socket option of the descriptor a link reads, or -1.
int socketOption(Link *link, int option)
{
    int value = 0;
    socklen_t length = sizeof value;
    const int descriptor = descriptorOf(link);
    if (descriptor < 0 || ::getsockopt(descriptor, SOL_SOCKET, option, &value, &length) != 0)
        return -1;
    return value;
}

// Both ends sealed as a handshake leaves them: what each sends arrives, in
// order, and on the wire every frame is a record, 60 bytes longer.
void tst_Links::sealedLinksCarryFramesBothWays()
{
    using Direction = RecordCipher::Direction;
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    auto *connecting = new SealedLink(pair.connecting, recordCipher(Direction::ConnectorToAcceptor),
                                      recordCipher(Direction::AcceptorToConnector), pair.client.get());
    auto *accepted = new SealedLink(pair.accepted, recordCipher(Direction::AcceptorToConnector),
                                    recordCipher(Direction::ConnectorToAcceptor), pair.server.get());
    QByteArray payload(5 * 1024 * 1024 + 3, Qt::Uninitialized);
    for (qsizetype i = 0; i < payload.size(); ++i)
        payload[i] = char(i * 31);
    QList<Frame> up{numberedFrame(1), makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload),
                    makeFrame(FrameKind::Heartbeat, ItemType::None, 0, {})};
    QList<Frame> down;
    for (int i = 0; i < 500; ++i) {
        up << numberedFrame(quint64(10 + i), 1 + i % 9);
        down << numberedFrame(quint64(100000 + i), 1 + i % 5);
    }
    QSignalSpy atServer(accepted, &Link::frameReceived);
    QSignalSpy atClient(connecting, &Link::frameReceived);
    for (const Frame &frame : up)
        connecting->sendFrame(frame);
    for (const Frame &frame : down)
        accepted->sendFrame(frame);
    QTRY_COMPARE_WITH_TIMEOUT(atServer.size(), up.size(), Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(atClient.size(), down.size(), Timeout);
    QCOMPARE(receivedFrames(atServer), up);
    QCOMPARE(receivedFrames(atClient), down);
    QCOMPARE(accepted->counters().bytesReceived, encodedSize(up) + quint64(up.size()) * RecordCipher::Overhead);
    QCOMPARE(connecting->counters().bytesReceived, encodedSize(down) + quint64(down.size()) * RecordCipher::Overhead);
    QCOMPARE(connecting->state(), Link::State::Connected);
    QCOMPARE(accepted->state(), Link::State::Connected);
}

void tst_Links::socketBufferOptionSizesTheKernelBuffers()
{
#ifndef Q_OS_LINUX
    QSKIP("the sizes checked are Linux's (it doubles what it is asked for)");
#else
    // Given a server asked for 64 KiB socket buffers and a client left at
    // the default (4 MiB, which the kernel caps at net.core.*mem_max)
    LinkPair pair;
    openPair(pair, {{QStringLiteral("socketBuffer"), 64 * 1024}});
    if (QTest::currentTestFailed())
        return;
    for (const int option : {SO_SNDBUF, SO_RCVBUF}) {
        // Then each end's socket has the size its transport asked for
        QCOMPARE(socketOption(pair.accepted, option), 2 * 64 * 1024);
        const int client = socketOption(pair.connecting, option);
        QVERIFY2(client > 2 * 64 * 1024, qPrintable(QStringLiteral("default buffer: %1 bytes").arg(client)));
    }
#endif
}

namespace {

void setReadBufferSize(QIODevice *device, qint64 bytes)
{
    if (auto *tcp = qobject_cast<QAbstractSocket *>(device))
        tcp->setReadBufferSize(bytes);
    else
        qobject_cast<QLocalSocket *>(device)->setReadBufferSize(bytes);
}

} // namespace

// A frame the socket took has not left: until the peer has it, the kernel's
// queue counts in unsentBytes() (TCP's bytes not sent, a Unix socket's bytes
// not read), which is what a node forwarding copies to several peers waits on.
void tst_Links::unsentBytesCountWhatTheKernelHolds()
{
#ifndef Q_OS_LINUX
    QSKIP("only Linux tells a socket's unsent bytes");
#else
    // Given a link whose peer reads nothing (its socket object holds one byte)
    LinkPair pair;
    std::unique_ptr<QIODevice> raw;
    Link *link = openRawPair(pair, raw);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(link && raw);
    setReadBufferSize(raw.get(), 1);
    // When the link sends a frame of 1 MiB, more than the peer's receive
    // buffer and window hold
    const QByteArray payload(1024 * 1024, 'u');
    const qint64 size = FrameHeaderSize + payload.size();
    link->sendFrame(makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload));
    // Then the link counts what it took
    QCOMPARE(link->counters().bytesQueued, quint64(size));
    // And bytes the socket object handed over still count until they leave:
    // the kernel holds some of them unsent
    QTRY_VERIFY_WITH_TIMEOUT(link->unsentBytes() > link->bytesToWrite(), Timeout);
    QVERIFY(link->unsentBytes() > 0);
    // When the peer reads it all, nothing is unsent
    setReadBufferSize(raw.get(), 0);
    qint64 got = 0;
    QTRY_VERIFY_WITH_TIMEOUT((got += raw->readAll().size()) == size, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(link->unsentBytes(), qint64(0), Timeout);
    QCOMPARE(link->counters().bytesQueued, quint64(size));
#endif
}

namespace {

// The TCP congestion control of the socket a link reads, or empty.
QByteArray congestionControl(Link *link)
{
#ifdef TCP_CONGESTION
    char name[32] = {};
    socklen_t length = sizeof name;
    const int descriptor = descriptorOf(link);
    if (descriptor < 0 || ::getsockopt(descriptor, IPPROTO_TCP, TCP_CONGESTION, name, &length) != 0)
        return {};
    return QByteArray(name, int(qstrnlen(name, length)));
#else
    Q_UNUSED(link);
    return {};
#endif
}

QByteArray procFileWord(const char *path)
{
    QFile file(QString::fromLatin1(path));
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed() : QByteArray();
}

} // namespace

// Over loopback a tcp link uses the congestion control of the transport's
// `loopbackCongestionControl` (cubic by default; BBR paces loopback ping-pong
// badly, tcplink.cpp), chosen before it connects; "" leaves the system's.
void tst_Links::loopbackLinksUseTheirOwnCongestionControl()
{
    QFETCH_GLOBAL(QString, transport);
    if (transport != QLatin1String("tcp"))
        QSKIP("congestion control is a tcp matter");
#ifndef Q_OS_LINUX
    QSKIP("TCP_CONGESTION is Linux's");
#else
    const QByteArray system = procFileWord("/proc/sys/net/ipv4/tcp_congestion_control");
    const QList<QByteArray> allowed = procFileWord("/proc/sys/net/ipv4/tcp_allowed_congestion_control").split(' ');
    // Another algorithm than the system's, so that using it shows the option works
    const QByteArray other = system == "reno" ? "cubic" : "reno";
    if (!allowed.contains("cubic") || !allowed.contains(other))
        QSKIP("this system does not allow cubic and reno");
    // Given a server asked for another algorithm, and a client at the default
    LinkPair pair;
    openPair(pair, {{QStringLiteral("loopbackCongestionControl"), QString::fromLatin1(other)}});
    if (QTest::currentTestFailed())
        return;
    // Then the server's end uses that one and the client's end cubic
    QCOMPARE(congestionControl(pair.accepted), other);
    QCOMPARE(congestionControl(pair.connecting), QByteArray("cubic"));
    // And a server told to leave the choice to the system does
    LinkPair second;
    openPair(second, {{QStringLiteral("loopbackCongestionControl"), QString()}});
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(congestionControl(second.accepted), system);
#endif
}

void tst_Links::everyFrameKind()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QByteArray object;
    object.append("\0\0\0\3abc", 7);
    QList<Frame> frames = {
        numberedFrame(1),
        makeFrame(FrameKind::Control, ItemType::Object, 1, object),
        makeFrame(FrameKind::Heartbeat, ItemType::None, 0, QByteArray()),
        makeFrame(FrameKind::Goodbye, ItemType::None, 0, QByteArray()),
    };
    frames[1].header.communicator = 3;
    frames[1].header.root = 2;
    frames[2].header.sequence = Q_UINT64_C(0xFFFFFFFFFFFFFFFF);
    QSignalSpy atServer(pair.accepted, &Link::frameReceived);
    for (const Frame &frame : frames)
        pair.connecting->sendFrame(frame);
    QTRY_COMPARE_WITH_TIMEOUT(atServer.size(), frames.size(), Timeout);
    QCOMPARE(receivedFrames(atServer), frames);
    const QList<FrameKind> kinds = {FrameKind::Data, FrameKind::Control, FrameKind::Heartbeat, FrameKind::Goodbye};
    for (int i = 0; i < kinds.size(); ++i)
        QCOMPARE(receivedFrames(atServer).at(i).header.kind, kinds.at(i));
}

void tst_Links::pausedLinkHoldsFramesUntilResumed()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QList<Frame> frames;
    for (int i = 0; i < 200; ++i)
        frames << numberedFrame(quint64(i), 1 + i % 7);
    // Given a receiver that pauses itself in the slot of the 10th frame, so
    // that frames read together with it are held back
    QList<Frame> received;
    Link *accepted = pair.accepted;
    connect(accepted, &Link::frameReceived, accepted, [&received, accepted](const Frame &frame) {
        received << frame;
        if (received.size() == 10)
            accepted->setReading(false);
    });
    // When the sender sends them all at once
    for (const Frame &frame : frames)
        pair.connecting->sendFrame(frame);
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 10, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(pair.connecting->bytesToWrite(), qint64(0), Timeout);
    // Then nothing more arrives while paused
    QTest::qWait(200);
    QCOMPARE(received.size(), 10);
    // And after resuming the rest arrives, in order
    accepted->setReading(true);
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), frames.size(), Timeout);
    QCOMPARE(received, frames);
}

// The peer sends frames and closes while this end does not read: the link
// stays open, holding them, until reading resumes; then every frame comes,
// then the close. (Before, the close dropped what waited in the socket.)
void tst_Links::peerClosingWhilePausedLosesNothing()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QList<Frame> received;
    Link *accepted = pair.accepted;
    connect(accepted, &Link::frameReceived, accepted, [&received](const Frame &frame) { received << frame; });
    accepted->setReading(false);
    QList<Frame> frames;
    for (int i = 0; i < 50; ++i)
        frames << numberedFrame(quint64(i), 1 + i % 7);
    for (const Frame &frame : frames)
        pair.connecting->sendFrame(frame);
    pair.connecting->close();
    QTest::qWait(300);
    QCOMPARE(received.size(), 0);
    QCOMPARE(accepted->state(), Link::State::Connected);
    accepted->setReading(true);
    QTRY_COMPARE_WITH_TIMEOUT(accepted->state(), Link::State::Closed, Timeout);
    QCOMPARE(received, frames);
    QVERIFY2(!accepted->error().isError(), qPrintable(accepted->errorString()));
}

void tst_Links::closeIsSeenByPeer()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy clientStates(pair.connecting, &Link::stateChanged);
    QSignalSpy serverErrors(pair.accepted, &Link::errorOccurred);
    pair.connecting->close();
    QCOMPARE(pair.connecting->state(), Link::State::Closed);
    QCOMPARE(clientStates.size(), 1);
    pair.connecting->close(); // a second close changes nothing
    QCOMPARE(clientStates.size(), 1);

    QTRY_COMPARE_WITH_TIMEOUT(pair.accepted->state(), Link::State::Closed, Timeout);
    // Closing between frames is not an error.
    QCOMPARE(serverErrors.size(), 0);
    QVERIFY(!pair.accepted->error().isError());
}

void tst_Links::framesQueuedBeforeCloseAreDelivered()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy atServer(pair.accepted, &Link::frameReceived);
    QList<Frame> sent;
    for (int i = 0; i < 200; ++i) {
        sent << numberedFrame(quint64(i), 2000);
        pair.connecting->sendFrame(sent.last());
    }
    sent << makeFrame(FrameKind::Goodbye, ItemType::None, 0, QByteArray());
    pair.connecting->sendFrame(sent.last());
    // Closed and deleted at once, as the world layer does with a finished peer.
    pair.connecting->close();
    delete pair.connecting;
    QTRY_COMPARE_WITH_TIMEOUT(atServer.size(), sent.size(), Timeout);
    QCOMPARE(receivedFrames(atServer), sent);
    QTRY_COMPARE_WITH_TIMEOUT(pair.accepted->state(), Link::State::Closed, Timeout);
    QVERIFY(!pair.accepted->error().isError());
}

void tst_Links::connectToDeadAddressFails()
{
    QFETCH_GLOBAL(QString, transport);
    auto client = makeTransport(transport, {});
    QVERIFY(client);
    const QString address = deadAddress(transport);
    QVERIFY(!address.isEmpty());
    auto link = client->connectTo(address);
    QVERIFY2(link, why(link).constData());

    // The order matters to the world layer: the reason first, then Closed.
    QStringList events;
    connect(*link, &Link::errorOccurred, this, [&](const Error &e) { events << errorCodeName(e.code); });
    connect(*link, &Link::stateChanged, this, [&](Link::State s) {
        events << QString::fromLatin1(QMetaEnum::fromType<Link::State>().valueToKey(int(s)));
    });
    QTRY_COMPARE_WITH_TIMEOUT((*link)->state(), Link::State::Closed, Timeout);
    // Refused, not just failed: nothing listens there, which the world layer
    // reads as "the peer's app has ended" when it reconnects.
    QCOMPARE(events, (QStringList{QStringLiteral("ConnectionRefused"), QStringLiteral("Closed")}));
    QCOMPARE((*link)->error().code, ErrorCode::ConnectionRefused);
    QVERIFY2((*link)->errorString().contains(address), qPrintable((*link)->errorString()));
}

void tst_Links::malformedAddressIsRefused()
{
    QFETCH_GLOBAL(QString, transport);
    auto t = makeTransport(transport);
    QVERIFY(t);
    const QStringList bad = {QString(), QStringLiteral("nonsense"), QStringLiteral("udp://127.0.0.1:5"),
                             transport == QLatin1String("tcp") ? QStringLiteral("tcp://127.0.0.1")
                                                                : QStringLiteral("local://../etc/passwd"),
                             transport == QLatin1String("tcp") ? QStringLiteral("tcp://127.0.0.1:0")
                                                                : QStringLiteral("local://a/b")};
    for (const QString &address : bad) {
        auto link = t->connectTo(address);
        QVERIFY2(!link, qPrintable(address));
        QCOMPARE(link.error().code, ErrorCode::BadAddress);
    }
    auto listening = t->listen(QStringLiteral("bogus://x"));
    QVERIFY(!listening);
    QCOMPARE(listening.error().code, ErrorCode::BadAddress);
}

void tst_Links::listenTwiceFails()
{
    QFETCH_GLOBAL(QString, transport);
    auto t = makeTransport(transport);
    QVERIFY(t);
    const QString wanted = transport == QLatin1String("tcp")
                               ? QStringLiteral("tcp://127.0.0.1:0")
                               : QStringLiteral("local://mmpi-test-") + QUuid::createUuid().toString(QUuid::Id128);
    auto first = t->listen(wanted);
    QVERIFY2(first, why(first).constData());
    if (transport == QLatin1String("local"))
        QCOMPARE(*first, wanted);
    auto second = t->listen(QString());
    QVERIFY(!second);
    QCOMPARE(second.error().code, ErrorCode::ListenFailed);

    // The same name or port is taken while the first listener lives.
    auto other = makeTransport(transport);
    auto taken = other->listen(*first);
    QVERIFY(!taken);
    QCOMPARE(taken.error().code, ErrorCode::ListenFailed);

    t->stopListening();
    QVERIFY(t->listenAddress().isEmpty());
}

void tst_Links::staleLocalSocketIsReplaced()
{
    QFETCH_GLOBAL(QString, transport);
    if (transport != QLatin1String("local"))
        QSKIP("only local servers leave a socket file behind");
#ifdef Q_OS_UNIX
    // What a crashed server leaves: a socket file nobody listens on.
    const QString name = QStringLiteral("mmpi-test-stale-") + QUuid::createUuid().toString(QUuid::Id128);
    const QByteArray path = QFile::encodeName(QDir::tempPath() + u'/' + name);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    QVERIFY(size_t(path.size()) < sizeof(addr.sun_path));
    memcpy(addr.sun_path, path.constData(), size_t(path.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    QVERIFY(fd >= 0);
    QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
    ::close(fd);
    QVERIFY(QFile::exists(QString::fromLocal8Bit(path)));

    auto t = makeTransport(transport);
    QVERIFY(t);
    auto listening = t->listen(QStringLiteral("local://") + name);
    QVERIFY2(listening, why(listening).constData());
    // And it really is ours now.
    auto client = makeTransport(transport);
    auto link = client->connectTo(*listening);
    QVERIFY(link);
    QTRY_COMPARE_WITH_TIMEOUT((*link)->state(), Link::State::Connected, Timeout);
#else
    QSKIP("needs Unix-domain sockets");
#endif
}

void tst_Links::sendOnUnconnectedLinkIsIgnored()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    // Connecting: not sent yet, and never sent later either.
    auto early = pair.client->connectTo(pair.address);
    QVERIFY(early);
    (*early)->sendFrame(numberedFrame(1));
    QCOMPARE((*early)->counters().framesSent, quint64(0));

    pair.connecting->close();
    pair.connecting->sendFrame(numberedFrame(2));
    QCOMPARE(pair.connecting->counters().framesSent, quint64(0));
    QCOMPARE(pair.connecting->bytesToWrite(), qint64(0));
}

void tst_Links::receiverMayCloseAndDeleteLinkInSlot()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    int delivered = 0;
    Link *accepted = pair.accepted;
    connect(accepted, &Link::frameReceived, this, [&delivered, accepted](const Frame &) {
        ++delivered;
        accepted->close();
        accepted->deleteLater();
    });
    // All in one write, so they arrive in one read: the link must stop
    // delivering the moment its receiver closed it.
    for (int i = 0; i < 20; ++i)
        pair.connecting->sendFrame(numberedFrame(quint64(i)));
    QTRY_VERIFY_WITH_TIMEOUT(!pair.accepted, Timeout);
    QCOMPARE(delivered, 1);
    QTRY_COMPARE_WITH_TIMEOUT(pair.connecting->state(), Link::State::Closed, Timeout);
}

void tst_Links::garbageFailsOnlyThatLink()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy incoming(pair.server.get(), &Transport::incomingLink);
    std::unique_ptr<QIODevice> raw;
    QPointer<Link> victim = acceptRaw(pair, incoming, raw);
    QVERIFY(victim);
    QSignalSpy errors(victim, &Link::errorOccurred);

    // The link names the peer and the reason in a warning.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^link .*%1.* failed: BadMagic")
                                                              .arg(pair.server->name())));
    raw->write("GET / HTTP/1.1\r\nHost: mmpi\r\n\r\n");
    QTRY_COMPARE_WITH_TIMEOUT(victim->state(), Link::State::Closed, Timeout);
    QCOMPARE(errors.size(), 1);
    QCOMPARE(victim->error().code, ErrorCode::BadMagic);
    QTRY_VERIFY_WITH_TIMEOUT(!isConnected(raw.get()), Timeout);

    // The well-behaved link on the same transport is untouched.
    QSignalSpy atServer(pair.accepted, &Link::frameReceived);
    QSignalSpy atClient(pair.connecting, &Link::frameReceived);
    pair.connecting->sendFrame(numberedFrame(1));
    pair.accepted->sendFrame(numberedFrame(2));
    QTRY_COMPARE_WITH_TIMEOUT(atServer.size(), 1, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(atClient.size(), 1, Timeout);
    QCOMPARE(pair.accepted->state(), Link::State::Connected);
}

// The link reads sockets its own way (staging buffer, payloads read in
// place); whatever the bytes and however they are chunked, it must deliver
// exactly what the reference decoder makes of them, and fail the same way.
void tst_Links::randomStreamsMatchTheDecoder()
{
    LinkPair pair;
    openPair(pair);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy incoming(pair.server.get(), &Transport::incomingLink);
    for (int seed = 1; seed <= 30; ++seed) {
        QRandomGenerator rng{quint32(seed)};
        const QByteArray stream = randomStream(rng);
        FrameDecoder reference;
        QVERIFY(reference.feed(stream));
        QList<Frame> expected;
        ErrorCode expectedError = ErrorCode::NoError;
        for (;;) {
            auto next = reference.next();
            if (!next) {
                expectedError = next.error().code;
                break;
            }
            if (!next->has_value())
                break;
            expected << **next;
        }
        if (expectedError == ErrorCode::NoError && reference.bufferedBytes() > 0)
            expectedError = ErrorCode::LinkClosed; // the peer leaves in the middle of a frame

        std::unique_ptr<QIODevice> raw;
        QPointer<Link> link = acceptRaw(pair, incoming, raw);
        QVERIFY(link);
        QList<Frame> got;
        connect(link, &Link::frameReceived, link, [&got](const Frame &frame) { got << frame; });
        for (qsizetype at = 0; at < stream.size() && isConnected(raw.get());) {
            const qsizetype chunk = qMin<qsizetype>(stream.size() - at, rng.bounded(1, 200000));
            raw->write(stream.constData() + at, chunk);
            at += chunk;
            QTest::qWait(rng.bounded(3) == 0 ? 1 : 0);
        }
        QTRY_COMPARE_WITH_TIMEOUT(raw->bytesToWrite(), qint64(0), Timeout);
        if (expectedError == ErrorCode::NoError || expectedError == ErrorCode::LinkClosed)
            disconnectRaw(raw.get());
        QTRY_COMPARE_WITH_TIMEOUT(link->state(), Link::State::Closed, Timeout);
        QVERIFY2(got == expected, qPrintable(QStringLiteral("seed %1: %2 frames, expected %3")
                                                 .arg(seed).arg(got.size()).arg(expected.size())));
        QCOMPARE(link->error().code, expectedError);
    }
}

// A frame whose bytes come in four pieces 20 ms apart, as a slow radio
// brings them, is a rate of what came after the first piece over the time
// it took; a frame that arrives whole is none. The pauses are the least the
// pieces take, so the rate is at most the one they allow (but for the
// moment within the first pause when the link first reads: a few ms).
void tst_Links::frameArrivingInPiecesIsARate()
{
    LinkPair pair;
    std::unique_ptr<QIODevice> raw;
    QPointer<Link> link = openRawPair(pair, raw);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(link);
    QSignalSpy frames(link, &Link::frameReceived);
    QSignalSpy rates(link, &Link::arrivalRateMeasured);

    raw->write(encodeFrame(numberedFrame(1, 5000)));
    QTRY_COMPARE_WITH_TIMEOUT(frames.size(), 1, Timeout);
    QCOMPARE(rates.size(), 0);

    const QByteArray bytes = encodeFrame(numberedFrame(2, 3000));
    constexpr int Pieces = 4;
    constexpr int PauseMs = 20;
    const qsizetype piece = bytes.size() / Pieces;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < Pieces; ++i) {
        const qsizetype from = i * piece;
        raw->write(bytes.mid(from, i == Pieces - 1 ? bytes.size() - from : piece));
        QVERIFY(raw->waitForBytesWritten(Timeout) || raw->bytesToWrite() == 0);
        if (i < Pieces - 1)
            QTest::qWait(PauseMs);
    }
    QTRY_COMPARE_WITH_TIMEOUT(frames.size(), 2, Timeout);
    QCOMPARE(rates.size(), 1);
    const double rate = rates.at(0).at(0).toDouble();
    const double afterFirst = double(bytes.size() - piece);
    const double most = afterFirst / ((Pieces - 1) * PauseMs / 1000.0);
    const double least = afterFirst / (std::max<qint64>(clock.elapsed(), 1) / 1000.0);
    qInfo("%.0f B/s (the pauses allow at most %.0f, the whole write took %lld ms)", rate, most, clock.elapsed());
    QVERIFY2(rate <= most * 1.1 && rate >= least * 0.98, qPrintable(QString::number(rate)));
}

void tst_Links::halfFrameThenDisconnect()
{
    LinkPair pair;
    std::unique_ptr<QIODevice> raw;
    QPointer<Link> link = openRawPair(pair, raw);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(link);
    QSignalSpy frames(link, &Link::frameReceived);

    const QByteArray whole = encodeFrame(numberedFrame(1));
    const QByteArray half = encodeFrame(numberedFrame(7, 100)).left(FrameHeaderSize + 150);
    raw->write(whole + half);
    QTRY_COMPARE_WITH_TIMEOUT(frames.size(), 1, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(link->counters().bytesReceived, quint64(whole.size() + half.size()), Timeout);
    disconnectRaw(raw.get());

    QTRY_COMPARE_WITH_TIMEOUT(link->state(), Link::State::Closed, Timeout);
    QCOMPARE(link->error().code, ErrorCode::LinkClosed);
    QCOMPARE(link->errorString(), QStringLiteral("peer closed the link in the middle of a frame (%1 bytes buffered)")
                                      .arg(half.size()));
    QCOMPARE(frames.size(), 1);
}

void tst_Links::oversizedHeaderIsRefused()
{
    LinkPair pair;
    std::unique_ptr<QIODevice> raw;
    QPointer<Link> link = openRawPair(pair, raw);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(link);

    // Claims a payload of almost 4 GiB; nothing of it may be waited for or
    // allocated.
    FrameHeader header;
    header.itemType = ItemType::Byte;
    header.count = 0xFFFFFF00u;
    header.payloadLength = 0xFFFFFF00u;
    raw->write(encodeHeader(header));
    QTRY_COMPARE_WITH_TIMEOUT(link->state(), Link::State::Closed, Timeout);
    QCOMPARE(link->error().code, ErrorCode::FrameTooLarge);
    QTRY_VERIFY_WITH_TIMEOUT(!isConnected(raw.get()), Timeout);
}

void tst_Links::frameOverConfiguredLimitIsRefused()
{
    LinkPair pair;
    openPair(pair, {{QStringLiteral("maxFrameSize"), 4096}});
    if (QTest::currentTestFailed())
        return;
    QSignalSpy atServer(pair.accepted, &Link::frameReceived);
    pair.connecting->sendFrame(numberedFrame(1, 1000)); // 4044 bytes: fits
    pair.connecting->sendFrame(numberedFrame(2, 1020)); // 4124 bytes: too large
    QTRY_COMPARE_WITH_TIMEOUT(pair.accepted->state(), Link::State::Closed, Timeout);
    QCOMPARE(atServer.size(), 1);
    QCOMPARE(pair.accepted->error().code, ErrorCode::FrameTooLarge);
    QTRY_COMPARE_WITH_TIMEOUT(pair.connecting->state(), Link::State::Closed, Timeout);
}

QTEST_GUILESS_MAIN(tst_Links)
#include "tst_links.moc"
