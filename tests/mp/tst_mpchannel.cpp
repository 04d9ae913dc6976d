// tst_mpchannel: Channel and ChannelGroup against raw QTcpSocket peers that
// speak edu.rit.mp byte by byte: the ID exchange (ours in one write, theirs in
// any split), every type out and in, PJ's tag and type matching, dropped extra
// items, bad input, a silent peer, a peer cut mid-message, the bounded queue,
// object messages sent on verbatim and forged ones refused, sends held at the
// high-water mark, paused reading, co_await, and RankMesh. All on 127.0.0.1.
#include "coroutinetest.h"
#include "mpvectors.h"

#include <mmpi/mp/channelgroup.h>
#include <mmpi/mp/rankmesh.h>

#include <QCoroTask>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>

#include <memory>
#include <type_traits>

using namespace mmpi;
using namespace mmpi::mp;
using namespace mpvectors;
using namespace std::chrono_literals;

namespace {

const QHostAddress localhost = QHostAddress::LocalHost;

QByteArray idBytes(qint32 id)
{
    QByteArray bytes(4, 0);
    qToBigEndian(id, bytes.data());
    return bytes;
}

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 5000)
{
    return QTest::qWaitFor(condition, timeoutMs);
}

// Read exactly n bytes from a raw peer, with the event loop running.
QByteArray readRaw(QTcpSocket *socket, qint64 n, int timeoutMs = 5000)
{
    if (!waitFor([&] { return socket->bytesAvailable() >= n; }, timeoutMs))
        return "timeout, have " + socket->readAll().toHex();
    return socket->read(n);
}

// A raw peer that listens; our group dials it.
struct RawServerLink
{
    QTcpServer server;
    QTcpSocket *socket = nullptr;
    Channel *channel = nullptr;
    QList<qint64> firstChunkSizes;

    // Accept our channel, check the 4-byte ID we send, answer with rawId.
    bool open(ChannelGroup &group, qint32 rawId)
    {
        if (!server.listen(localhost))
            return false;
        channel = group.connectTo(QStringLiteral("127.0.0.1"), server.serverPort());
        if (!waitFor([&] { return server.hasPendingConnections(); }))
            return false;
        socket = server.nextPendingConnection();
        QObject::connect(socket, &QTcpSocket::readyRead, socket,
                         [this] { firstChunkSizes.append(socket->bytesAvailable()); });
        if (readRaw(socket, 4) != idBytes(group.id()))
            return false;
        socket->write(idBytes(rawId));
        return waitFor([&] { return channel->isOpen(); });
    }
};

// A raw peer that dials our group.
std::unique_ptr<QTcpSocket> rawClient(ChannelGroup &group, qint32 rawId, Channel **channel = nullptr)
{
    auto socket = std::make_unique<QTcpSocket>();
    QSignalSpy opened(&group, &ChannelGroup::channelOpened);
    socket->connectToHost(localhost, group.serverPort());
    if (!socket->waitForConnected(5000))
        return nullptr;
    socket->write(idBytes(rawId));
    if (readRaw(socket.get(), 4) != idBytes(group.id()) || !waitFor([&] { return opened.size() == 1; }))
        return nullptr;
    if (channel)
        *channel = opened.at(0).at(0).value<Channel *>();
    return socket;
}

Received receiveOrFail(ChannelGroup &group, const ReceiveSpec &spec)
{
    Receive receive = group.receive(spec);
    if (!receive.waitForFinished(5000) || !*receive.result()) {
        Received none;
        none.status.tag = -999999;
        return none;
    }
    return **receive.result();
}

QCoro::Task<qint64> sumOfInts(ChannelGroup &group, Channel *channel, int messages)
{
    qint64 sum = 0;
    for (int i = 0; i < messages; ++i) {
        const ReceiveSpec spec = ReceiveSpec::forType(ItemType::Int, 16, TagRange::any(), channel);
        const Result<Received> received = co_await group.receive(spec);
        if (!received)
            co_return -1;
        const auto values = received->values<qint32>();
        for (qint32 v : *values)
            sum += v;
    }
    co_return sum;
}

// A message of `bytes` signed bytes, all equal to the tag's low byte, so that
// each one on the wire shows where it belongs.
Message bulk(qint32 tag, int bytes)
{
    return Message{tag, quint8(ItemType::SignedByte), bytes, QByteArray(bytes, char(tag))};
}

// A channel whose peer reads nothing, sent bulk messages until one waits at
// the high-water mark.
struct HeldChannel
{
    std::unique_ptr<ChannelGroup> group;
    RawServerLink link;
    Channel *channel = nullptr;
    QList<Send> sends;
    QByteArray wire; // every message sent, in order

    bool fill(qint64 highWaterMark, int messageBytes)
    {
        ChannelGroupOptions options;
        options.highWaterMark = highWaterMark;
        group = std::make_unique<ChannelGroup>(1, options);
        if (!link.open(*group, 2))
            return false;
        channel = link.channel;
        link.socket->setReadBufferSize(4096); // the peer takes no more from the kernel than it reads
        // 256 MiB at most: far more than the socket buffers and the mark hold.
        for (qint32 tag = 0; tag < (256 << 20) / messageBytes && (sends.isEmpty() || sends.last().isFinished()); ++tag) {
            sends.append(channel->sendNoWait(bulk(tag, messageBytes)));
            wire += *encodeMessage(bulk(tag, messageBytes));
        }
        return !sends.last().isFinished() && channel->bytesToWrite() <= highWaterMark;
    }
};

QCoro::Task<bool> sentOnceAwaited(Send send)
{
    const Result<void> sent = co_await send;
    co_return bool(sent);
}

} // namespace

class TestMpChannel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void connectSendsIdInOneWriteAndAcceptsSplitReply()
    {
        ChannelGroup group(0x01020304);
        QSignalSpy opened(&group, &ChannelGroup::channelOpened);
        QTcpServer server;
        QVERIFY(server.listen(localhost));
        Channel *channel = group.connectTo(QStringLiteral("127.0.0.1"), server.serverPort());
        QCOMPARE(channel->state(), Channel::State::Connecting);
        QVERIFY(waitFor([&] { return server.hasPendingConnections(); }));
        QTcpSocket *raw = server.nextPendingConnection();
        QList<qint64> chunks;
        connect(raw, &QTcpSocket::readyRead, raw, [&] { chunks.append(raw->bytesAvailable()); });
        QVERIFY(waitFor([&] { return !chunks.isEmpty(); }));
        // PJ reads the ID with one read(): it must arrive as one piece.
        QCOMPARE(chunks.first(), 4);
        QCOMPARE(raw->readAll(), hex("01020304"));
        QCOMPARE(channel->state(), Channel::State::ExchangingIds);
        // Our side accepts the peer's ID in any split.
        const QByteArray reply = idBytes(-7);
        for (char byte : reply) {
            raw->write(&byte, 1);
            raw->flush();
            QTest::qWait(20);
        }
        QVERIFY(waitFor([&] { return channel->isOpen(); }));
        QCOMPARE(channel->farId(), -7);
        QCOMPARE(channel->nearId(), 0x01020304);
        QCOMPARE(opened.size(), 1);
        QCOMPARE(group.channel(-7), channel);
        QVERIFY(!group.channel(0));
        // Nothing else was sent: no hello, no goodbye.
        QTest::qWait(50);
        QCOMPARE(raw->bytesAvailable(), 0);
    }

    void acceptReadsSplitIdAndAnswersInOneWrite()
    {
        ChannelGroup group(42);
        QVERIFY(group.listen(localhost));
        QSignalSpy opened(&group, &ChannelGroup::channelOpened);
        QTcpSocket raw;
        raw.connectToHost(localhost, group.serverPort());
        QVERIFY(raw.waitForConnected(5000));
        QList<qint64> chunks;
        connect(&raw, &QTcpSocket::readyRead, &raw, [&] { chunks.append(raw.bytesAvailable()); });
        raw.write(hex("0000"));
        raw.flush();
        QTest::qWait(50);
        QCOMPARE(opened.size(), 0);
        QCOMPARE(chunks.size(), 0); // we answer only once we have the whole ID
        raw.write(hex("00"));
        raw.flush();
        QTest::qWait(20);
        raw.write(hex("09"));
        QVERIFY(waitFor([&] { return !chunks.isEmpty(); }));
        QCOMPARE(chunks.first(), 4);
        QCOMPARE(raw.readAll(), hex("0000002a"));
        QVERIFY(waitFor([&] { return opened.size() == 1; }));
        auto *channel = opened.at(0).at(0).value<Channel *>();
        QCOMPARE(channel->farId(), 9);
        QVERIFY(channel->isIncoming());
    }

    void sendsEveryTypeAsPjDoes()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        Channel *ch = link.channel;
        QVERIFY(ch->send<bool>(7, {true, false, true}));
        QVERIFY(ch->send<qint8>(7, {-1, 127}));
        QVERIFY(ch->send<qint8>(7, {-128, 5}, ItemType::SignedByte));
        QVERIFY(ch->send<quint8>(7, {255, 0}));
        QVERIFY(ch->send<qint16>(7, {-2, 258}));
        QVERIFY(ch->send<qint16>(7, {-32768}, ItemType::SignedShort));
        QVERIFY(ch->send<quint16>(7, {65535, 1}));
        QVERIFY(ch->send<qint32>(7, {1, -1}));
        QVERIFY(ch->send<qint64>(7, {0x0102030405060708LL}));
        QVERIFY(ch->send<char16_t>(7, {u'A', char16_t(0x20ac)}));
        QVERIFY(ch->send<float>(7, {1.0f, -2.5f}));
        QVERIFY(ch->send<double>(-2, {1.0, -0.5}));
        QVERIFY(ch->send<qint32>(0, QList<qint32>{}));
        // Codes 2, 12 and 13 built by hand go out as PJ's 1, 10 and 11.
        QVERIFY(ch->send(Message{1, 2, 2, hex("ff01")}));
        QVERIFY(ch->send(Message{2, 12, 2, hex("ff80")}));
        QVERIFY(ch->send(Message{3, 13, 1, hex("fffe")}));
        // Never code 9; and nothing hits the wire for a refused send.
        const auto object = ch->send(Message{4, 9, 2, hex("aced")});
        QCOMPARE(object.error().code, ErrorCode::TypeMismatch);
        QCOMPARE(ch->send<quint8>(7, {1}, ItemType::Byte).error().code, ErrorCode::TypeMismatch);

        const QByteArray expected = boolMsg() + byteMsg() + signed8Msg() + unsigned8Msg() + shortMsg() + signed16Msg()
            + unsigned16Msg() + intMsg() + longMsg() + charMsg() + floatMsg() + doubleMsg() + emptyIntMsg()
            + hex("01cbf854 00000001 01 00000002 ff 01") + hex("01cbf854 00000002 0a 00000002 ff 80")
            + hex("01cbf854 00000003 0b 00000001 fffe");
        QCOMPARE(readRaw(link.socket, expected.size()).toHex(' '), expected.toHex(' '));
        QTest::qWait(50);
        QCOMPARE(link.socket->bytesAvailable(), 0);
    }

    void receivesEveryCode()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        // All in one write, then the receives: they come from the queue.
        link.socket->write(boolMsg() + byteMsg() + unsigned8Msg() + shortMsg() + unsigned16Msg() + intMsg() + longMsg()
                           + charMsg() + floatMsg() + doubleMsg() + code2Msg() + code12Msg() + code13Msg() + objectMsg());
        QVERIFY(waitFor([&] { return link.channel->queuedMessages() == 14; }));

        // PJ's bytes and booleans share code 1: the first code-1 message comes first.
        auto r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Boolean, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<bool>(), (QList<bool>{true, false, true}));
        QCOMPARE(r.status.farId, 2);
        QCOMPARE(r.status.channel.data(), link.channel);
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Byte, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<qint8>(), (QList<qint8>{-1, 127}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::UnsignedByte, 10, TagRange::exact(7)));
        QCOMPARE(r.status.typeCode, quint8(10));
        QCOMPARE(*r.values<quint8>(), (QList<quint8>{255, 0}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Short, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<qint16>(), (QList<qint16>{-2, 258}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::UnsignedShort, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<quint16>(), (QList<quint16>{65535, 1}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<qint32>(), (QList<qint32>{1, -1}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Long, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<qint64>(), (QList<qint64>{0x0102030405060708LL}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Char, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<char16_t>(), (QList<char16_t>{u'A', char16_t(0x20ac)}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Float, 10, TagRange::exact(7)));
        QCOMPARE(*r.values<float>(), (QList<float>{1.0f, -2.5f}));
        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Double, 10, TagRange::exact(-2)));
        QCOMPARE(*r.values<double>(), (QList<double>{1.0, -0.5}));

        ReceiveSpec exact;
        exact.tags = TagRange::any();
        exact.typeCode = 2;
        r = receiveOrFail(group, exact);
        QCOMPARE(*r.values<qint8>(), (QList<qint8>{-1, 1}));
        exact.typeCode = 12;
        r = receiveOrFail(group, exact);
        QCOMPARE(*r.values<quint8>(), (QList<quint8>{255, 128}));
        exact.typeCode = 13;
        r = receiveOrFail(group, exact);
        QCOMPARE(*r.values<quint16>(), (QList<quint16>{65534}));

        r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Object, 1, TagRange::exact(4)));
        QVERIFY(r.status.isObject());
        QCOMPARE(r.status.count, 6);
        QCOMPARE(r.javaSerializedBytes(), hex("aced0005 7704")); // whole despite capacity 1
        QCOMPARE(r.values<qint8>().error().code, ErrorCode::TypeMismatch);
        QCOMPARE(link.channel->queuedMessages(), 0);
    }

    void tagAndTypeMatching()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        auto intAt = [](qint32 tag, qint32 value) {
            return *encodeMessage(*makeMessage<qint32>(tag, std::span<const qint32>(&value, 1)));
        };
        // Posted before anything arrives: each takes the first match in order.
        Receive noTag = group.receive(ReceiveSpec::forType(ItemType::Int));        // tag 0 only
        Receive range = group.receive(ReceiveSpec::forType(ItemType::Int, 10, TagRange::range(1, 10)));
        Receive wrongType = group.receive(ReceiveSpec::forType(ItemType::Double, 10, TagRange::any()));
        Receive exact = group.receive(ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(100)));
        link.socket->write(intAt(5, 50) + intAt(100, 1000) + intAt(0, 0) + intAt(-3, -30) + intAt(11, 110));
        QVERIFY(waitFor([&] { return noTag.isFinished() && range.isFinished() && exact.isFinished(); }));
        QCOMPARE(noTag.result()->value().status.tag, 0);
        QCOMPARE(range.result()->value().status.tag, 5);
        QCOMPARE(exact.result()->value().status.tag, 100);
        // Tags -3 and 11 matched nothing posted: queued, in order.
        QVERIFY(waitFor([&] { return link.channel->queuedMessages() == 2; }));
        QVERIFY(!wrongType.isFinished()); // Int never matches a Double receive
        QVERIFY(wrongType.cancel());
        QCOMPARE(wrongType.result()->error().code, ErrorCode::Cancelled);
        const auto any = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::any()));
        QCOMPARE(any.status.tag, -3);
        QCOMPARE(*any.values<qint32>(), QList<qint32>{-30});
        Receive empty = group.receive(ReceiveSpec::forType(ItemType::Int, 10, TagRange::range(12, 11)));
        QTest::qWait(20);
        QVERIFY(!empty.isFinished());
        empty.cancel();
        const auto last = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::range(11, 20)));
        QCOMPARE(last.status.tag, 11);
    }

    void anyChannelAndGivenChannel()
    {
        ChannelGroup group(1);
        QVERIFY(group.listen(localhost));
        Channel *a = nullptr;
        Channel *b = nullptr;
        auto rawA = rawClient(group, 10, &a);
        auto rawB = rawClient(group, 20, &b);
        QVERIFY(rawA && rawB);
        QCOMPARE(group.channel(10), a);
        QCOMPARE(group.channel(20), b);
        rawB->write(intMsg());
        QVERIFY(waitFor([&] { return b->queuedMessages() == 1; }));
        rawA->write(intMsg());
        QVERIFY(waitFor([&] { return a->queuedMessages() == 1; }));
        // Any channel: the oldest arrival first.
        auto first = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(7)));
        QCOMPARE(first.status.farId, 20);
        // A given channel: only its own messages.
        Receive onB = group.receive(ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(7), b));
        QTest::qWait(20);
        QVERIFY(!onB.isFinished());
        rawB->write(intMsg());
        QVERIFY(onB.waitForFinished(5000));
        QCOMPARE(onB.result()->value().status.farId, 20);
        QCOMPARE(a->queuedMessages(), 1);
    }

    void extraItemsAreReadAndDropped()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        link.socket->write(hex("01cbf854 00000000 04 00000005 00000001 00000002 00000003 00000004 00000005") + intMsg());
        const auto cut = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 2));
        QCOMPARE(cut.status.count, 5); // the real N
        QCOMPARE(cut.status.kept, 2);
        QVERIFY(cut.status.wasTruncated());
        QCOMPARE(*cut.values<qint32>(), (QList<qint32>{1, 2}));
        // The stream stayed in step: the next message is intact.
        const auto next = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 2, TagRange::exact(7)));
        QCOMPARE(next.status.count, 2);
        QCOMPARE(*next.values<qint32>(), (QList<qint32>{1, -1}));
    }

    void badInputFailsTheChannel_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<ErrorCode>("code");
        QTest::newRow("bad magic") << hex("01cbf855 00000000 04 00000000") << ErrorCode::BadMagic;
        QTest::newRow("code 14") << hex("01cbf854 00000000 0e 00000001 00") << ErrorCode::BadItemType;
        QTest::newRow("code 0") << hex("01cbf854 00000000 00 00000000") << ErrorCode::BadItemType;
        QTest::newRow("negative N") << hex("01cbf854 00000000 04 80000000") << ErrorCode::BadHeader;
        QTest::newRow("absurd N") << hex("01cbf854 00000000 08 7fffffff") << ErrorCode::FrameTooLarge;
    }
    void badInputFailsTheChannel()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(ErrorCode, code);
        ChannelGroupOptions options;
        options.maxMessageSize = 1024 * 1024;
        ChannelGroup group(1, options);
        QSignalSpy failed(&group, &ChannelGroup::channelFailed);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        Receive onChannel = group.receive(ReceiveSpec::forType(ItemType::Double, 10, TagRange::any(), link.channel));
        Receive onAny = group.receive(ReceiveSpec::forType(ItemType::Double, 10, TagRange::any()));
        link.socket->write(intMsg() + bytes);
        QVERIFY(waitFor([&] { return link.channel->state() == Channel::State::Failed; }));
        QCOMPARE(link.channel->error().code, code);
        QVERIFY(link.channel->error().message.contains(QStringLiteral("127.0.0.1")));
        QCOMPARE(failed.size(), 1);
        QVERIFY(onChannel.waitForFinished(5000));
        QCOMPARE(onChannel.result()->error().code, code);
        QVERIFY(!onAny.isFinished()); // other channels may still bring one
        // We close our end (PJ closes silently on a bad magic too).
        QVERIFY(waitFor([&] { return link.socket->state() == QAbstractSocket::UnconnectedState; }));
        // The good message before the garbage is still there.
        const auto before = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(7)));
        QCOMPARE(*before.values<qint32>(), (QList<qint32>{1, -1}));
        QCOMPARE(link.channel->send<qint32>(1, {1}).error().code, ErrorCode::LinkClosed);
    }

    void peerThatNeverSendsItsIdTimesOut()
    {
        ChannelGroupOptions options;
        options.idTimeout = 300ms;
        ChannelGroup group(1, options);
        QTcpServer server;
        QVERIFY(server.listen(localhost));
        QElapsedTimer clock;
        clock.start();
        Channel *dialed = group.connectTo(QStringLiteral("127.0.0.1"), server.serverPort());
        QVERIFY(waitFor([&] { return dialed->state() == Channel::State::Failed; }));
        QVERIFY(clock.elapsed() >= 290);
        QCOMPARE(dialed->error().code, ErrorCode::ProtocolViolation);
        QVERIFY(dialed->error().message.contains(QStringLiteral("0 of the 4 bytes")));
        QVERIFY(dialed->error().message.contains(QStringLiteral("300 ms")));

        // Accepting side: a peer that connects and sends only half its ID.
        QVERIFY(group.listen(localhost));
        QSignalSpy failed(&group, &ChannelGroup::channelFailed);
        QTcpSocket raw;
        raw.connectToHost(localhost, group.serverPort());
        QVERIFY(raw.waitForConnected(5000));
        raw.write(hex("0000"));
        QVERIFY(waitFor([&] { return failed.size() == 1; }));
        const auto error = failed.at(0).at(1).value<Error>();
        QCOMPARE(error.code, ErrorCode::ProtocolViolation);
        QVERIFY(error.message.contains(QStringLiteral("2 of the 4 bytes")));
        QVERIFY(waitFor([&] { return raw.state() == QAbstractSocket::UnconnectedState; }));
    }

    void refusedConnect()
    {
        QTcpServer server;
        QVERIFY(server.listen(localhost));
        const quint16 port = server.serverPort();
        server.close();
        ChannelGroup group(1);
        Channel *channel = group.connectTo(QStringLiteral("127.0.0.1"), port);
        QVERIFY(waitFor([&] { return channel->state() == Channel::State::Failed; }));
        QCOMPARE(channel->error().code, ErrorCode::ConnectionRefused);
    }

    void peerVanishesMidMessage()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        Receive waiting = group.receive(ReceiveSpec::forType(ItemType::Double, 10, TagRange::any(), link.channel));
        link.socket->write(intMsg() + doubleMsg().first(20));
        link.socket->flush();
        QTest::qWait(20);
        link.socket->close();
        QVERIFY(waitFor([&] { return link.channel->state() == Channel::State::Failed; }));
        QCOMPARE(link.channel->error().code, ErrorCode::TruncatedPayload);
        QVERIFY(link.channel->error().message.contains(QStringLiteral("7 of 16 item bytes")));
        QVERIFY(waiting.waitForFinished(5000));
        QCOMPARE(waiting.result()->error().code, ErrorCode::TruncatedPayload);
        const auto before = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(7)));
        QCOMPARE(before.status.count, 2);
    }

    void peerClosesBetweenMessages()
    {
        ChannelGroup group(1);
        QSignalSpy closed(&group, &ChannelGroup::channelClosed);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        link.socket->write(intMsg());
        link.socket->flush();
        link.socket->disconnectFromHost();
        QVERIFY(waitFor([&] { return closed.size() == 1; }));
        QCOMPARE(link.channel->state(), Channel::State::Closed);
        QVERIFY(!link.channel->error().isError());
        // What came before the close is still delivered; then the channel is done.
        const auto before = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 10, TagRange::exact(7), link.channel));
        QCOMPARE(before.status.count, 2);
        Receive after = group.receive(ReceiveSpec::forType(ItemType::Int, 10, TagRange::any(), link.channel));
        QVERIFY(after.isFinished());
        QCOMPARE(after.result()->error().code, ErrorCode::LinkClosed);
    }

    void fullQueueStopsReadingUntilAReceive()
    {
        ChannelGroupOptions options;
        options.maxQueuedMessages = 2;
        options.readChunkSize = 8; // under one message: each read completes at most one
        ChannelGroup group(1, options);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        QByteArray five;
        for (qint32 tag = 1; tag <= 5; ++tag)
            five += *encodeMessage(*makeMessage<qint32>(tag, std::span<const qint32>(&tag, 1)));
        link.socket->write(five);
        QVERIFY(waitFor([&] { return link.channel->isReadingPaused(); }));
        QTest::qWait(50);
        QCOMPARE(link.channel->queuedMessages(), 2); // nothing dropped, nothing more read
        QVERIFY(link.channel->isOpen());
        for (qint32 tag = 1; tag <= 5; ++tag) {
            const auto r = receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 1, TagRange::any()));
            QCOMPARE(r.status.tag, tag); // in order, across the pause
        }
        QCOMPARE(link.channel->queuedMessages(), 0);
    }

    void objectMessagesGoOnVerbatimAndForgedOnesAreRefused()
    {
        static_assert(!std::is_default_constructible_v<ObjectMessage>
                          && !std::is_constructible_v<ObjectMessage, qint32, QByteArray>,
                      "only a ChannelGroup makes an ObjectMessage, from one it received");
        const QByteArray stream = javaObjectStream();
        QCOMPARE(stream.size(), 205);
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        link.socket->write(javaObjectMsg() + intMsg());
        const auto object = receiveOrFail(group, ReceiveSpec::forType(ItemType::Object, 1, TagRange::any()));
        QVERIFY(object.objectMessage);
        QCOMPARE(object.objectMessage->count(), 205);
        QCOMPARE(object.objectMessage->bytes(), stream);
        QVERIFY(!receiveOrFail(group, ReceiveSpec::forType(ItemType::Int, 2, TagRange::any())).objectMessage);

        // Back as it came, and on with another tag: code 9, the same N, the same bytes.
        QVERIFY(link.channel->send(11, *object.objectMessage));
        QVERIFY(link.channel->send(12, *object.objectMessage));
        QByteArray retagged = javaObjectMsg();
        retagged[7] = 12;
        // The same bytes in a message the app built are refused, and nothing of them is sent.
        const auto forged = link.channel->send(Message{11, quint8(ItemType::Object), 205, stream});
        QCOMPARE(forged.error().code, ErrorCode::TypeMismatch);
        QVERIFY(forged.error().message.contains(QStringLiteral("Java serialization")));
        QCOMPARE(link.channel->sendNoWait(Message{11, 9, 6, hex("aced0005 7704")}).result()->error().code,
                 ErrorCode::TypeMismatch);
        QCOMPARE(readRaw(link.socket, 2 * retagged.size()).toHex(' '), (javaObjectMsg() + retagged).toHex(' '));
        QTest::qWait(50);
        QCOMPARE(link.socket->bytesAvailable(), 0);
    }

    void sendsWaitPastTheHighWaterMarkUntilThePeerReads()
    {
        HeldChannel held;
        QVERIFY2(held.fill(256 * 1024, 64 * 1024), "no send waited, or the mark was passed");
        Channel *channel = held.channel;
        QList<Send> &sends = held.sends;
        QByteArray &wire = held.wire;
        QCOMPARE(channel->waitingSends(), 1);
        // Later sends wait behind it; a cancelled one takes its message back.
        const qint32 next = qint32(sends.size());
        const Send cancelled = channel->sendNoWait(bulk(next, 1000));
        const Send after = channel->sendNoWait(bulk(next + 1, 1000));
        wire += *encodeMessage(bulk(next + 1, 1000));
        QCOMPARE(channel->waitingSends(), 3);
        QVERIFY(cancelled.cancel());
        QCOMPARE(cancelled.result()->error().code, ErrorCode::Cancelled);
        QCOMPARE(channel->waitingSends(), 2);
        QCOMPARE(channel->waitingBytes(), 2 * HeaderSize + 64 * 1024 + 1000);
        QVERIFY(!sends.last().isFinished() && !after.isFinished());

        // The peer starts reading; a blocking send returns once its message is
        // handed to the socket, the waiting ones before it, in order.
        QByteArray got;
        QTcpSocket *peer = held.link.socket;
        connect(peer, &QTcpSocket::readyRead, this, [&] { got += peer->readAll(); });
        QTimer::singleShot(0, this, [&] {
            peer->setReadBufferSize(0);
            got += peer->readAll();
        });
        auto awaited = sentOnceAwaited(after);
        QVERIFY(channel->send(bulk(next + 2, 1000)));
        wire += *encodeMessage(bulk(next + 2, 1000));
        QVERIFY(sends.last().isFinished() && *sends.last().result());
        QVERIFY(mmpi::test::finish(awaited));
        QCOMPARE(channel->waitingSends(), 0);
        QVERIFY(waitFor([&] { return got.size() >= wire.size(); }, 20000));
        QCOMPARE(got.size(), wire.size());
        QVERIFY2(got == wire, "every message, once, in order, and none of the cancelled one");
    }

    void waitingSendsFailWhenTheChannelEnds()
    {
        HeldChannel held;
        QVERIFY(held.fill(64 * 1024, 32 * 1024));
        Channel *channel = held.channel;
        channel->close();
        QCOMPARE(held.sends.last().result()->error().code, ErrorCode::LinkClosed);
        QCOMPARE(channel->waitingSends(), 0);
        QCOMPARE(channel->waitingBytes(), 0);
        QCOMPARE(channel->sendNoWait(bulk(1, 1)).result()->error().code, ErrorCode::LinkClosed);
        QCOMPARE(channel->send(bulk(1, 1)).error().code, ErrorCode::LinkClosed);
        // Deleting a channel ends what waits on it too.
        HeldChannel other;
        QVERIFY(other.fill(64 * 1024, 32 * 1024));
        delete other.channel;
        QCOMPARE(other.sends.last().result()->error().code, ErrorCode::LinkClosed);
    }

    void pausedReadingHoldsThePeerUntilResumed()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        link.channel->pauseReading();
        QVERIFY(link.channel->isReadingPaused());
        link.socket->write(intMsg() + boolMsg());
        link.socket->flush();
        QTest::qWait(50);
        QCOMPARE(link.channel->queuedMessages(), 0);
        link.channel->resumeReading();
        QVERIFY(!link.channel->isReadingPaused());
        QVERIFY(waitFor([&] { return link.channel->queuedMessages() == 2; }));
        const auto first = receiveOrFail(group, ReceiveSpec::anyMessage());
        QCOMPARE(*first.values<qint32>(), (QList<qint32>{1, -1}));
    }

    void mmpiToMmpiWithCoAwait()
    {
        ChannelGroup server(100);
        ChannelGroup client(200);
        QVERIFY(server.listen(localhost));
        Channel *out = client.connectTo(QStringLiteral("127.0.0.1"), server.serverPort());
        QVERIFY(waitFor([&] { return out->isOpen() && server.channel(200); }));
        QCOMPARE(out->farId(), 100);
        Channel *in = server.channel(200);
        auto task = sumOfInts(server, in, 3);
        QVERIFY(out->send<qint32>(1, {1, 2, 3}));
        QVERIFY(out->send<qint32>(2, {10, 20}));
        QVERIFY(out->send<qint32>(3, {100}));
        QCOMPARE(mmpi::test::finish(task), 136);
        // And back, every type through MMPI on both ends.
        QVERIFY(in->send<quint16>(5, {65535, 7}));
        QVERIFY(in->send<double>(6, {3.25}));
        auto u16 = receiveOrFail(client, ReceiveSpec::forType(ItemType::UnsignedShort, 10, TagRange::exact(5)));
        QCOMPARE(*u16.values<quint16>(), (QList<quint16>{65535, 7}));
        auto dbl = receiveOrFail(client, ReceiveSpec::forType(ItemType::Double, 10, TagRange::exact(6)));
        QCOMPARE(*dbl.values<double>(), QList<double>{3.25});
    }

    void closeCancelsAndSendsNoGoodbye()
    {
        ChannelGroup group(1);
        RawServerLink link;
        QVERIFY(link.open(group, 2));
        QVERIFY(link.channel->send<qint32>(7, {1, -1}));
        Receive pending = group.receive(ReceiveSpec::anyMessage());
        group.close();
        QCOMPARE(pending.result()->error().code, ErrorCode::Cancelled);
        // The last message still goes out, then only the end of the stream.
        QVERIFY(waitFor([&] { return link.socket->state() == QAbstractSocket::UnconnectedState; }));
        QCOMPARE(link.socket->readAll(), intMsg());
        QCOMPARE(link.channel->state(), Channel::State::Closed);
    }

    void rankTables()
    {
        auto table = RankMesh::parseTable(QStringLiteral("0=127.0.0.1:7000, 2=host.example:7002"));
        QVERIFY(table);
        QCOMPARE(table->size(), 2);
        QCOMPARE(table->value(2), (RankAddress{QStringLiteral("host.example"), 7002}));
        QCOMPARE(RankMesh::parseTable(QStringLiteral("0=a:1,0=b:2")).error().code, ErrorCode::BadConfiguration);
        QCOMPARE(RankMesh::parseTable(QStringLiteral("x=a:1")).error().code, ErrorCode::BadConfiguration);
        QCOMPARE(RankMesh::parseTable(QStringLiteral("0=a")).error().code, ErrorCode::BadConfiguration);
        QCOMPARE(RankMesh::parseTable(QString()).error().code, ErrorCode::BadConfiguration);

        qputenv("MMPI_RANK", "1");
        qputenv("MMPI_SIZE", "3");
        qunsetenv("MMPI_MP_RANKS");
        qputenv("MMPI_MP_BASE_PORT", "7100");
        auto config = RankMesh::configFromEnvironment();
        QVERIFY(config);
        QCOMPARE(config->rank, 1);
        QCOMPARE(config->table, RankMesh::sequentialTable(QStringLiteral("127.0.0.1"), 7100, 3));
        qputenv("MMPI_MP_RANKS", "0=127.0.0.1:9000");
        QCOMPARE(RankMesh::configFromEnvironment().error().code, ErrorCode::BadConfiguration); // rank 1 missing
        qunsetenv("MMPI_RANK");
        qunsetenv("MMPI_SIZE");
        qunsetenv("MMPI_MP_RANKS");
        qunsetenv("MMPI_MP_BASE_PORT");
    }

    void rankMeshOfThree()
    {
        // Listening first gives each rank a free port to list in the table.
        std::vector<std::unique_ptr<ChannelGroup>> groups;
        RankMesh::Table table;
        for (qint32 rank = 0; rank < 3; ++rank) {
            groups.push_back(std::make_unique<ChannelGroup>(rank));
            QVERIFY(groups.back()->listen(localhost));
            table.insert(rank, {QStringLiteral("127.0.0.1"), groups.back()->serverPort()});
        }
        std::vector<std::unique_ptr<RankMesh>> meshes;
        int ready = 0;
        for (auto &group : groups) {
            meshes.push_back(std::make_unique<RankMesh>(group.get(), table));
            connect(meshes.back().get(), &RankMesh::ready, this, [&] { ++ready; });
            QVERIFY(meshes.back()->start(10s, 50ms));
        }
        QVERIFY(waitFor([&] { return ready == 3; }, 10000));
        for (auto &mesh : meshes) {
            for (qint32 rank = 0; rank < 3; ++rank) {
                if (rank != mesh->rank())
                    QCOMPARE(mesh->channelForRank(rank)->farId(), rank);
            }
            QCOMPARE(mesh->group()->channels().size(), 2); // one channel per pair
        }
        QVERIFY(meshes[2]->channelForRank(0)->send<qint32>(9, {2}));
        const auto r = receiveOrFail(*groups[0], ReceiveSpec::forType(ItemType::Int, 1, TagRange::exact(9)));
        QCOMPARE(r.status.farId, 2);
    }

    void rankMeshRetriesUntilLowerRankListensThenTimesOut()
    {
        QTcpServer probe;
        QVERIFY(probe.listen(localhost));
        const quint16 freePort = probe.serverPort();
        probe.close();
        ChannelGroup one(1);
        QVERIFY(one.listen(localhost));
        RankMesh::Table table{{0, {QStringLiteral("127.0.0.1"), freePort}},
                              {1, {QStringLiteral("127.0.0.1"), one.serverPort()}}};
        RankMesh mesh(&one, table);
        QSignalSpy failed(&mesh, &RankMesh::failed);
        QVERIFY(mesh.start(400ms, 50ms));
        QVERIFY(waitFor([&] { return failed.size() == 1; }));
        const auto error = failed.at(0).at(0).value<Error>();
        QCOMPARE(error.code, ErrorCode::FormationTimeout);
        QVERIFY(error.message.contains(QStringLiteral("ranks 0")));
        QCOMPARE(mesh.missingRanks(), QList<qint32>{0});
    }
};

QTEST_GUILESS_MAIN(TestMpChannel)
#include "tst_mpchannel.moc"
