// Discovery of the real local and tcp plugins on one machine: every advertiser
// of a world is found at its listen address, other worlds are not reported,
// malformed adverts (datagrams or files, untrusted input) are skipped, and an
// advert ends when advertising stops. Each test has its own beacon port or
// discovery directory.
#include "transporttest.h"

#include "freeport.h"

#include <QDir>
#include <QFile>
#include <QNetworkDatagram>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUdpSocket>
#include <QtEndian>

using namespace mmpi;
using namespace mmpi::test;

namespace {

constexpr int Interval = 50;


// The beacon layout of docs/guide/transports.md, written out by hand.
QByteArray beaconDatagram(const QByteArray &world, const QByteArray &node, const QByteArray &host,
                          quint16 port, quint8 version = 1)
{
    QByteArray out("MMPB");
    out.append(char(version));
    char portBytes[2];
    qToBigEndian<quint16>(port, portBytes);
    out.append(portBytes, 2);
    for (const QByteArray &field : {world, node, host}) {
        out.append(char(field.size()));
        out.append(field);
    }
    return out;
}

// Reported adverts by node id (the last report of each).
QHash<QString, PeerAdvert> advertsByNode(const QSignalSpy &spy)
{
    QHash<QString, PeerAdvert> adverts;
    for (const QList<QVariant> &arguments : spy) {
        const auto advert = arguments.at(0).value<PeerAdvert>();
        adverts.insert(advert.nodeId, advert);
    }
    return adverts;
}

// The node ids reported so far, sorted.
QStringList nodeIds(const QSignalSpy &spy)
{
    QStringList ids = advertsByNode(spy).keys();
    ids.sort();
    return ids;
}

} // namespace

class tst_Discovery : public QObject
{
    Q_OBJECT

private:
    // A transport with the test's options and `extra` over them.
    std::unique_ptr<Transport> makeNode(const QVariantMap &extra = {});
    // A listening node advertising `nodeId` in `world`; null on failure.
    std::unique_ptr<Transport> advertiser(const QString &world, const QString &nodeId);
    bool isTcp() const;
    QString advertFile(const QString &world, const QString &nodeId) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    QVariantMap m_options;
    quint16 m_beaconPort = 0;

private Q_SLOTS:
    void initTestCase_data();
    void init();
    void cleanup();
    void supportsDiscovery();
    void everyAdvertiserIsFound();
    void malformedAdvertsAreIgnored();
    void stopAdvertisingEndsTheAdvert();
    void directAdvertsGoBesideTheBeacon();
    void stopDiscoveryEndsReports();
    void unsafeNamesStayInsideTheDirectory();
    void anyHostIsReplacedBySender();
    void beaconPortInUseIsAClearError();
    void everyListedHostIsReportedInOrder();
    void anyListensAdvertiseTheChosenInterfaces();
};

bool tst_Discovery::isTcp() const
{
    QFETCH_GLOBAL(QString, transport);
    return transport == QLatin1String("tcp");
}

void tst_Discovery::initTestCase_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("local") << QStringLiteral("local");
    QTest::newRow("tcp") << QStringLiteral("tcp");
}

void tst_Discovery::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    if (isTcp()) {
        m_beaconPort = freeBeaconPort();
        QVERIFY(m_beaconPort != 0);
        m_options = {{QStringLiteral("beaconPort"), m_beaconPort},
                     {QStringLiteral("beaconTargets"), QStringList{QStringLiteral("127.0.0.1")}},
                     {QStringLiteral("beaconInterval"), Interval}};
    } else {
        m_options = {{QStringLiteral("discoveryDir"), m_dir->path()},
                     {QStringLiteral("discoveryInterval"), Interval}};
    }
}

void tst_Discovery::cleanup()
{
    m_dir.reset();
}

std::unique_ptr<Transport> tst_Discovery::makeNode(const QVariantMap &extra)
{
    QFETCH_GLOBAL(QString, transport);
    QVariantMap options = m_options;
    options.insert(extra);
    return makeTransport(transport, options);
}

std::unique_ptr<Transport> tst_Discovery::advertiser(const QString &world, const QString &nodeId)
{
    auto node = makeNode();
    if (!node)
        return nullptr;
    auto address = node->listen(QString());
    if (!address)
        return nullptr;
    if (auto advertised = node->advertise({world, nodeId, *address}); !advertised) {
        qWarning().noquote() << advertised.error().toString();
        return nullptr;
    }
    return node;
}

QString tst_Discovery::advertFile(const QString &world, const QString &nodeId) const
{
    return m_dir->path() + u'/' + world + u'/' + nodeId + QStringLiteral(".json");
}

void tst_Discovery::supportsDiscovery()
{
    auto node = makeNode();
    QVERIFY(node);
    QVERIFY(node->supportsDiscovery());
}

void tst_Discovery::everyAdvertiserIsFound()
{
    std::vector<std::unique_ptr<Transport>> nodes;
    QHash<QString, QString> expected; // node id -> listen address
    for (const QString &id : {QStringLiteral("node-a"), QStringLiteral("node-b"), QStringLiteral("node-c")}) {
        nodes.push_back(advertiser(QStringLiteral("blue"), id));
        QVERIFY(nodes.back());
        expected.insert(id, nodes.back()->listenAddress());
    }
    auto stranger = advertiser(QStringLiteral("red"), QStringLiteral("node-x"));
    QVERIFY(stranger);

    auto root = makeNode();
    QVERIFY(root);
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    auto started = root->startDiscovery(QStringLiteral("blue"));
    QVERIFY2(started, why(started).constData());
    QStringList ids = expected.keys();
    ids.sort();
    QTRY_COMPARE_WITH_TIMEOUT(nodeIds(found), ids, Timeout);
    // A few more rounds: the other world must still not show up.
    QTest::qWait(5 * Interval);
    QCOMPARE(nodeIds(found), ids);
    const auto adverts = advertsByNode(found);
    for (auto it = expected.cbegin(); it != expected.cend(); ++it) {
        QVERIFY2(adverts.contains(it.key()), qPrintable(it.key()));
        QCOMPARE(adverts.value(it.key()), (PeerAdvert{QStringLiteral("blue"), it.key(), it.value()}));
    }
}

void tst_Discovery::malformedAdvertsAreIgnored()
{
    auto root = makeNode();
    QVERIFY(root);
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    PeerAdvert handmade{QStringLiteral("blue"), QStringLiteral("handmade"), QString()};

    if (isTcp()) {
        QUdpSocket sender;
        const QByteArray valid = beaconDatagram("blue", "handmade", "127.0.0.1", 4242);
        const QList<QByteArray> junk = {
            QByteArray(),
            QByteArray("hello"),
            QByteArray(100, '\xFF'),
            beaconDatagram("blue", "v2", "127.0.0.1", 4242, 2), // a version-1 body under version 2
            beaconDatagram("blue", "v3", "127.0.0.1", 4242, 3),
            beaconDatagram("blue", "noport", "127.0.0.1", 0),
            beaconDatagram("blue", "badhost", "not-an-ip", 4242),
            beaconDatagram("blue", "", "127.0.0.1", 4242),
            beaconDatagram("blue", "bad-utf8-\xC3", "127.0.0.1", 4242),
            valid.left(valid.size() - 3),
            valid + QByteArray("trailing"),
            valid + QByteArray(600, 'x'), // over the 512-byte limit
        };
        for (const QByteArray &datagram : junk)
            sender.writeDatagram(datagram, QHostAddress::LocalHost, m_beaconPort);
        sender.writeDatagram(valid, QHostAddress::LocalHost, m_beaconPort);
        handmade.address = QStringLiteral("tcp://127.0.0.1:4242");
    } else {
        QVERIFY(QDir(m_dir->path()).mkpath(QStringLiteral("blue")));
        const auto write = [&](const QString &name, const QByteArray &content) {
            QFile file(m_dir->path() + QStringLiteral("/blue/") + name);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(content);
        };
        write(QStringLiteral("garbage.json"), "not json at all");
        write(QStringLiteral("empty.json"), "{}");
        write(QStringLiteral("array.json"), "[1, 2]");
        write(QStringLiteral("v2.json"), R"({"version":2,"worldName":"blue","nodeId":"v2","address":"local://x"})");
        write(QStringLiteral("mismatch.json"),
              R"({"version":1,"worldName":"blue","nodeId":"other","address":"local://x"})");
        write(QStringLiteral("wrongworld.json"),
              R"({"version":1,"worldName":"red","nodeId":"wrongworld","address":"local://x"})");
        write(QStringLiteral("badaddress.json"),
              R"({"version":1,"worldName":"blue","nodeId":"badaddress","address":"tcp://1.2.3.4:5"})");
        write(QStringLiteral("huge.json"), QByteArray(10000, ' '));
        // Left behind by a process that has ended (no such pid).
        write(QStringLiteral("dead.json"),
              R"({"version":1,"worldName":"blue","nodeId":"dead","address":"local://x","pid":2147483000})");
        write(QStringLiteral("handmade.json"),
              R"({"version":1,"worldName":"blue","nodeId":"handmade","address":"local://hand-made"})");
        handmade.address = QStringLiteral("local://hand-made");
    }
    auto real = advertiser(QStringLiteral("blue"), QStringLiteral("real"));
    QVERIFY(real);

    const QStringList expected = {QStringLiteral("handmade"), QStringLiteral("real")};
    QTRY_COMPARE_WITH_TIMEOUT(nodeIds(found), expected, Timeout);
    QTest::qWait(3 * Interval);
    QCOMPARE(nodeIds(found), expected);
    const auto adverts = advertsByNode(found);
    QCOMPARE(adverts.value(QStringLiteral("handmade")), handmade);
    QCOMPARE(adverts.value(QStringLiteral("real")).address, real->listenAddress());
}

void tst_Discovery::stopAdvertisingEndsTheAdvert()
{
    auto node = advertiser(QStringLiteral("blue"), QStringLiteral("node-a"));
    QVERIFY(node);
    auto root = makeNode();
    QVERIFY(root);
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    QTRY_VERIFY_WITH_TIMEOUT(!found.isEmpty(), Timeout);
    if (!isTcp())
        QVERIFY(QFile::exists(advertFile(QStringLiteral("blue"), QStringLiteral("node-a"))));

    node->stopAdvertising();
    if (!isTcp())
        QVERIFY(!QFile::exists(advertFile(QStringLiteral("blue"), QStringLiteral("node-a"))));
    QTest::qWait(2 * Interval); // a datagram may still be on its way
    found.clear();
    QTest::qWait(5 * Interval);
    QCOMPARE(found.size(), 0);

    // Advertising again works, and the destructor ends it too.
    QVERIFY(node->advertise({QStringLiteral("blue"), QStringLiteral("node-a"), node->listenAddress()}));
    QTRY_VERIFY_WITH_TIMEOUT(!found.isEmpty(), Timeout);
    node.reset();
    if (!isTcp())
        QVERIFY(!QFile::exists(advertFile(QStringLiteral("blue"), QStringLiteral("node-a"))));
}

void tst_Discovery::directAdvertsGoBesideTheBeacon()
{
    // Given a node whose beacon a root on the usual port hears ...
    auto node = advertiser(QStringLiteral("blue"), QStringLiteral("node-a"));
    QVERIFY(node);
    if (!isTcp()) {
        // local has no addresses to send adverts to: a clear error, and its own adverts go on
        const auto sent = node->advertiseTo({QStringLiteral("blue"), QStringLiteral("node-a"), node->listenAddress()},
                                            {QStringLiteral("tcp://127.0.0.1:1")});
        QVERIFY(!sent);
        QCOMPARE(sent.error().code, ErrorCode::DiscoveryFailed);
        QVERIFY(QFile::exists(advertFile(QStringLiteral("blue"), QStringLiteral("node-a"))));
        return;
    }
    auto usual = makeNode();
    QVERIFY(usual);
    QSignalSpy heardThere(usual.get(), &Transport::peerDiscovered);
    QVERIFY(usual->startDiscovery(QStringLiteral("blue")));
    QTRY_VERIFY_WITH_TIMEOUT(!heardThere.isEmpty(), Timeout);
    // ... when its chain moves on to a join code's root on another port ...
    const quint16 otherPort = freeBeaconPort();
    QVERIFY(otherPort != 0 && otherPort != m_beaconPort);
    auto coded = makeNode({{QStringLiteral("beaconPort"), otherPort}});
    QVERIFY(coded);
    QSignalSpy heardHere(coded.get(), &Transport::peerDiscovered);
    QVERIFY(coded->startDiscovery(QStringLiteral("blue")));
    const auto sent = node->advertiseTo({QStringLiteral("blue"), QStringLiteral("node-a"), node->listenAddress()},
                                        {QStringLiteral("tcp://127.0.0.1:%1").arg(otherPort)});
    QVERIFY2(sent, why(sent).constData());
    // ... both hear it: the beacon goes on beside the direct adverts.
    QTRY_VERIFY_WITH_TIMEOUT(!heardHere.isEmpty(), Timeout);
    QTest::qWait(2 * Interval);
    heardThere.clear();
    QTRY_VERIFY_WITH_TIMEOUT(!heardThere.isEmpty(), Timeout);
}

void tst_Discovery::stopDiscoveryEndsReports()
{
    auto node = advertiser(QStringLiteral("blue"), QStringLiteral("node-a"));
    QVERIFY(node);
    auto root = makeNode();
    QVERIFY(root);
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    QTRY_VERIFY_WITH_TIMEOUT(!found.isEmpty(), Timeout);
    root->stopDiscovery();
    found.clear();
    QTest::qWait(5 * Interval);
    QCOMPARE(found.size(), 0);
    // And it can start again.
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    QTRY_VERIFY_WITH_TIMEOUT(!found.isEmpty(), Timeout);
}

void tst_Discovery::unsafeNamesStayInsideTheDirectory()
{
    if (isTcp())
        QSKIP("names become path components only in the local transport");
    const QString world = QStringLiteral("../../escape");
    const QString nodeId = QStringLiteral("../x/./..\\y");
    auto node = advertiser(world, nodeId);
    QVERIFY(node);
    // Exactly one directory holding exactly one file, both inside the dir.
    const QStringList worlds = QDir(m_dir->path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(worlds.size(), 1);
    QVERIFY(!worlds.first().contains(u'/') && !worlds.first().contains(QStringLiteral("..")));
    const QStringList files = QDir(m_dir->path() + u'/' + worlds.first()).entryList(QDir::Files);
    QCOMPARE(files.size(), 1);
    QVERIFY(!files.first().contains(QStringLiteral("..")));
    QVERIFY(!QDir(m_dir->path() + QStringLiteral("/../escape")).exists());

    auto root = makeNode();
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(world));
    QTRY_VERIFY_WITH_TIMEOUT(!found.isEmpty(), Timeout);
    QCOMPARE(found.first().first().value<PeerAdvert>(), (PeerAdvert{world, nodeId, node->listenAddress()}));

    auto empty = root->advertise({QString(), QStringLiteral("n"), node->listenAddress()});
    QVERIFY(!empty);
    QCOMPARE(empty.error().code, ErrorCode::DiscoveryFailed);
}

void tst_Discovery::anyHostIsReplacedBySender()
{
    if (!isTcp())
        QSKIP("only tcp adverts can name every interface");
    // A node listening on every interface advertises 0.0.0.0 (or ::); the
    // discoverer must use the address the datagram came from. The datagrams
    // are made by hand so that nothing here listens beyond loopback.
    auto node = makeNode();
    QVERIFY(node);
    auto address = node->listen(QString());
    QVERIFY(address);
    const quint16 port = address->section(u':', -1).toUShort();
    auto root = makeNode();
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    QUdpSocket sender;
    sender.writeDatagram(beaconDatagram("blue", "v4", "0.0.0.0", port), QHostAddress::LocalHost, m_beaconPort);
    sender.writeDatagram(beaconDatagram("blue", "v6", "::", port), QHostAddress::LocalHost, m_beaconPort);
    QTRY_COMPARE_WITH_TIMEOUT(nodeIds(found), (QStringList{QStringLiteral("v4"), QStringLiteral("v6")}), Timeout);
    for (const PeerAdvert &advert : advertsByNode(found))
        QCOMPARE(advert.address, *address);

    // The discovered address really reaches the node.
    QSignalSpy incoming(node.get(), &Transport::incomingLink);
    auto link = root->connectTo(advertsByNode(found).value(QStringLiteral("v4")).address);
    QVERIFY(link);
    QTRY_COMPARE_WITH_TIMEOUT((*link)->state(), Link::State::Connected, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(incoming.size(), 1, Timeout);
}

void tst_Discovery::everyListedHostIsReportedInOrder()
{
    if (!isTcp())
        QSKIP("only tcp adverts list hosts");
    // A version-2 datagram from 127.0.0.1 listing 10.255.0.1, then
    // 127.0.0.1: the sender's address first (the path that works), then the
    // rest in the node's order.
    auto root = makeNode();
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    QByteArray datagram = beaconDatagram("blue", "multi", "", 4242, 2);
    datagram.chop(1); // the empty host's length byte: version 2 has a list instead
    datagram += QByteArray::fromHex("02040aff0001047f000001");
    QUdpSocket sender;
    sender.writeDatagram(datagram, QHostAddress::LocalHost, m_beaconPort);
    QTRY_COMPARE_WITH_TIMEOUT(nodeIds(found), QStringList{QStringLiteral("multi")}, Timeout);
    const PeerAdvert advert = advertsByNode(found).value(QStringLiteral("multi"));
    QCOMPARE(advert.address, QStringLiteral("tcp://127.0.0.1:4242"));
    QCOMPARE(advert.alternateAddresses, QStringList{QStringLiteral("tcp://10.255.0.1:4242")});
}

void tst_Discovery::anyListensAdvertiseTheChosenInterfaces()
{
    if (!isTcp())
        QSKIP("only tcp adverts list hosts");
    // Listening on every interface with interfaces=lo named: the advert
    // lists 127.0.0.1 (not 0.0.0.0), and the root reports it.
    auto node = makeNode({{QStringLiteral("listenHost"), QStringLiteral("0.0.0.0")},
                          {QStringLiteral("interfaces"), QStringLiteral("lo")}});
    QVERIFY(node);
    auto address = node->listen(QString());
    QVERIFY(address);
    const quint16 port = address->section(u':', -1).toUShort();
    auto root = makeNode();
    QSignalSpy found(root.get(), &Transport::peerDiscovered);
    QVERIFY(root->startDiscovery(QStringLiteral("blue")));
    QVERIFY(node->advertise({QStringLiteral("blue"), QStringLiteral("any"), *address, {}}));
    QTRY_COMPARE_WITH_TIMEOUT(nodeIds(found), QStringList{QStringLiteral("any")}, Timeout);
    const PeerAdvert advert = advertsByNode(found).value(QStringLiteral("any"));
    QCOMPARE(advert.address, QStringLiteral("tcp://127.0.0.1:%1").arg(port));
    QVERIFY(advert.alternateAddresses.isEmpty());
}

void tst_Discovery::beaconPortInUseIsAClearError()
{
    if (!isTcp())
        QSKIP("only tcp binds a port for discovery");
    QUdpSocket squatter;
    QVERIFY(squatter.bind(QHostAddress::AnyIPv4, m_beaconPort, QUdpSocket::DontShareAddress));
    auto root = makeNode();
    QVERIFY(root);
    auto started = root->startDiscovery(QStringLiteral("blue"));
    QVERIFY(!started);
    QCOMPARE(started.error().code, ErrorCode::DiscoveryFailed);
    QVERIFY2(started.error().message.contains(QString::number(m_beaconPort)),
             qPrintable(started.error().message));
}

QTEST_GUILESS_MAIN(tst_Discovery)
#include "tst_discovery.moc"
