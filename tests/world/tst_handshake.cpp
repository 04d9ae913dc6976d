// The sealed handshake (Handshake, an internal part of the world) over a
// pair of links in memory: both ends come out with a SealedLink that carries
// frames both ways and puts none of their bytes on the wire in the clear;
// every handshake gets fresh keys; different world keys, and a peer that
// speaks the older unsealed handshake, are refused with their reasons.
#include "handshake.h"
#include "pipelink.h"

#include <QDataStream>
#include <QIODevice>
#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;
using namespace mmpi::test;
using namespace std::chrono_literals;

namespace {

constexpr int Patience = 5000;
const QByteArray Marker = QByteArrayLiteral("STROKE-MARKER-7f3a");

LocalIdentity identity(const QString &nodeId, qint32 rank, const QByteArray &key = QByteArrayLiteral("world key"))
{
    return {QStringLiteral("test-world"), key, nodeId, rank, QStringLiteral("pipe://%1").arg(nodeId)};
}

// Both ends of one handshake, and what each reported.
struct Handshaken
{
    explicit Handshaken(const QByteArray &connectorKey = QByteArrayLiteral("world key"))
    {
        std::tie(acceptorPipe, connectorPipe) = PipeLink::pair(&holder);
        acceptor = Handshake::accept(acceptorPipe, identity(QStringLiteral("root"), 0),
                                     [](const PeerIdentity &) { return success(); }, 5s, &holder);
        connector = Handshake::connect(connectorPipe, identity(QStringLiteral("node"), 1, connectorKey),
                                       LinkPurpose::Mesh, 5s, &holder);
        acceptorDone = std::make_unique<QSignalSpy>(acceptor, &Handshake::succeeded);
        connectorDone = std::make_unique<QSignalSpy>(connector, &Handshake::succeeded);
        acceptorFailed = std::make_unique<QSignalSpy>(acceptor, &Handshake::failed);
        connectorFailed = std::make_unique<QSignalSpy>(connector, &Handshake::failed);
    }
    Link *acceptorLink() const { return acceptorDone->value(0).value(0).value<Link *>(); }
    Link *connectorLink() const { return connectorDone->value(0).value(0).value<Link *>(); }

    QObject holder;
    PipeLink *acceptorPipe = nullptr;
    PipeLink *connectorPipe = nullptr;
    Handshake *acceptor = nullptr;
    Handshake *connector = nullptr;
    std::unique_ptr<QSignalSpy> acceptorDone, connectorDone, acceptorFailed, connectorFailed;
};

Frame marked(int n)
{
    QByteArray payload = Marker + QByteArray::number(n);
    Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload);
    frame.header.sequence = quint64(n);
    return frame;
}

// A control frame of the older protocol: its Challenge or Response layout.
Frame unsealedControl(ControlType type)
{
    QByteArray payload;
    QDataStream stream(&payload, QIODevice::WriteOnly);
    stream.setVersion(QDataStream::Qt_6_4);
    if (type == ControlType::UnsealedChallenge)
        stream << QStringLiteral("test-world") << QStringLiteral("old-root") << QByteArray(NonceSize, 'n');
    else
        stream << quint8(LinkPurpose::Join) << QByteArray(NonceSize, 'n') << QByteArray(MacSize, 'm')
               << QStringLiteral("old-node") << qint32(NoRank) << QString();
    Frame frame = makeFrame(FrameKind::Control, ItemType::UnsignedByte, quint32(payload.size()), payload);
    frame.header.tag = qint32(type);
    return frame;
}

} // namespace

class TestHandshake : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sealedLinkCarriesFramesBothWays();
    void everyHandshakeGetsFreshKeys();
    void tamperedRecordEndsTheLink();
    void differentWorldKeysAreRefused();
    void unsealedAcceptorIsRefused();
    void unsealedConnectorIsRefused();
};

void TestHandshake::sealedLinkCarriesFramesBothWays()
{
    Handshaken h;
    QTRY_VERIFY_WITH_TIMEOUT(h.acceptorDone->size() == 1 && h.connectorDone->size() == 1, Patience);
    Link *root = h.acceptorLink();
    Link *node = h.connectorLink();
    QVERIFY(root != h.acceptorPipe && node != h.connectorPipe); // wrapped
    QSignalSpy atRoot(root, &Link::frameReceived);
    QSignalSpy atNode(node, &Link::frameReceived);
    const qsizetype handshakeFrames = h.connectorPipe->sent.size() + h.acceptorPipe->sent.size();
    QCOMPARE(handshakeFrames, 3); // Challenge, Response, Accept

    for (int n = 1; n <= 3; ++n) {
        node->sendFrame(marked(n));
        root->sendFrame(marked(10 + n));
    }
    QTRY_VERIFY_WITH_TIMEOUT(atRoot.size() == 3 && atNode.size() == 3, Patience);
    for (int n = 1; n <= 3; ++n) {
        QCOMPARE(atRoot.at(n - 1).at(0).value<Frame>(), marked(n));
        QCOMPARE(atNode.at(n - 1).at(0).value<Frame>(), marked(10 + n));
    }
    // On the wire: records only, and not one of the marker's bytes in a row.
    for (PipeLink *pipe : {h.connectorPipe, h.acceptorPipe}) {
        const qsizetype records = pipe->sent.size() - (pipe == h.connectorPipe ? 1 : 2);
        QCOMPARE(records, 3);
        for (qsizetype i = pipe->sent.size() - records; i < pipe->sent.size(); ++i) {
            QCOMPARE(pipe->sent.at(i).header.kind, FrameKind::Sealed);
            QVERIFY(!encodeFrame(pipe->sent.at(i)).contains(Marker));
        }
    }
}

// Two handshakes of the same nodes, the same frame: other bytes on the wire
// (a resumed link is a new handshake, so it never reuses a nonce with a key).
void TestHandshake::everyHandshakeGetsFreshKeys()
{
    QList<QByteArray> records;
    for (int i = 0; i < 2; ++i) {
        Handshaken h;
        QTRY_VERIFY_WITH_TIMEOUT(h.connectorDone->size() == 1, Patience);
        h.connectorLink()->sendFrame(marked(1));
        records.append(encodeFrame(h.connectorPipe->sent.last()));
    }
    QCOMPARE(records.at(0).size(), records.at(1).size());
    QVERIFY(records.at(0) != records.at(1));
}

void TestHandshake::tamperedRecordEndsTheLink()
{
    Handshaken h;
    QTRY_VERIFY_WITH_TIMEOUT(h.acceptorDone->size() == 1 && h.connectorDone->size() == 1, Patience);
    Link *root = h.acceptorLink();
    Link *node = h.connectorLink();
    QSignalSpy errors(root, &Link::errorOccurred);
    QSignalSpy received(root, &Link::frameReceived);
    node->sendFrame(marked(1));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 1, Patience);
    // A record altered on the way, as by someone between the two.
    Frame altered = h.connectorPipe->sent.last();
    altered.header.sequence = 2;
    altered.payload[altered.payload.size() / 2] ^= 0x20;
    Q_EMIT h.acceptorPipe->frameReceived(altered);
    QCOMPARE(errors.size(), 1);
    const Error error = errors.at(0).at(0).value<Error>();
    QCOMPARE(error.code, ErrorCode::RecordRefused);
    QVERIFY2(error.message.contains(QLatin1String("failed authentication")), qPrintable(error.message));
    QCOMPARE(root->state(), Link::State::Closed);
    QCOMPARE(received.size(), 1);
}

void TestHandshake::differentWorldKeysAreRefused()
{
    Handshaken h(QByteArrayLiteral("another key"));
    QTRY_VERIFY_WITH_TIMEOUT(h.acceptorFailed->size() == 1 && h.connectorFailed->size() == 1, Patience);
    QCOMPARE(h.acceptorDone->size(), 0);
    QCOMPARE(h.connectorDone->size(), 0);
    for (QSignalSpy *failed : {h.acceptorFailed.get(), h.connectorFailed.get()})
        QCOMPARE(failed->at(0).at(1).value<Error>().code, ErrorCode::WorldKeyMismatch);
}

void TestHandshake::unsealedAcceptorIsRefused()
{
    QObject holder;
    auto [old, ours] = PipeLink::pair(&holder);
    auto *handshake = Handshake::connect(ours, identity(QStringLiteral("node"), 1), LinkPurpose::Join, 5s, &holder);
    QSignalSpy failed(handshake, &Handshake::failed);
    Q_EMIT ours->frameReceived(unsealedControl(ControlType::UnsealedChallenge));
    QCOMPARE(failed.size(), 1);
    const Error error = failed.at(0).at(1).value<Error>();
    QCOMPARE(error.code, ErrorCode::SealingUnsupported);
    QVERIFY2(error.message.contains(QLatin1String("unsealed handshake of an older MMPI")), qPrintable(error.message));
    // The old node hears why, in the Refuse it understands.
    QCOMPARE(ours->sent.size(), 1);
    const auto refusal = decodeControl<Refuse>(ours->sent.at(0));
    QVERIFY(refusal.hasValue());
    QCOMPARE(refusal->reason, error.message);
    QCOMPARE(ours->state(), Link::State::Closed);
}

void TestHandshake::unsealedConnectorIsRefused()
{
    QObject holder;
    auto [ours, old] = PipeLink::pair(&holder);
    auto *handshake = Handshake::accept(ours, identity(QStringLiteral("root"), 0),
                                        [](const PeerIdentity &) { return success(); }, 5s, &holder);
    QSignalSpy failed(handshake, &Handshake::failed);
    Q_EMIT ours->frameReceived(unsealedControl(ControlType::UnsealedResponse));
    QCOMPARE(failed.size(), 1);
    QCOMPARE(failed.at(0).at(1).value<Error>().code, ErrorCode::SealingUnsupported);
}

QTEST_GUILESS_MAIN(TestHandshake)
#include "tst_handshake.moc"
