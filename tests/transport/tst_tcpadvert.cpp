// The tcp beacon's datagram (TcpAdvert, version 2 with a list of hosts, and
// version 1 still read): what encode() writes is what decode() reads, the
// bytes are those of docs/guide/transports.md, and every malformed datagram
// is refused with DiscoveryFailed and its reason, never read past its end.
#include "tcpadvert.h"

#include <QTest>
#include <QtEndian>

using namespace mmpi;

namespace {

// Why a result failed, or nothing (QVERIFY2 evaluates its message always).
template<typename T>
QByteArray whyNot(const mmpi::Result<T> &result)
{
    return result ? QByteArray() : result.error().toString().toUtf8();
}

QByteArray header(quint8 version, quint16 port)
{
    QByteArray out("MMPB");
    out.append(char(version));
    char p[2];
    qToBigEndian<quint16>(port, p);
    return out.append(p, 2);
}

QByteArray text(const QByteArray &s)
{
    return char(s.size()) + s;
}

// A version-2 datagram written out by hand: world "blue", node "n1", port 4242.
QByteArray v2(const QByteArray &hosts, quint8 count)
{
    return header(2, 4242) + text("blue") + text("n1") + char(count) + hosts;
}

const QByteArray host10 = QByteArray::fromHex("040a000001");   // 10.0.0.1
const QByteArray host192 = QByteArray::fromHex("04c0a80107");  // 192.168.1.7
const QByteArray hostV6 = QByteArray::fromHex("06fd000000000000000000000000000001"); // fd00::1

} // namespace

class tst_TcpAdvert : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void encodesTheDocumentedBytes();
    void roundTrips();
    void readsVersion1();
    void refusesMalformed_data();
    void refusesMalformed();
    void refusesWhatCannotBeSent();
    void triesTheSenderFirst();
    void worldAnnouncementHasItsBytes();
    void refusesMalformedWorldAnnouncements();
};

void tst_TcpAdvert::encodesTheDocumentedBytes()
{
    const TcpAdvert advert{QStringLiteral("blue"), QStringLiteral("n1"),
                           {QHostAddress(QStringLiteral("10.0.0.1")), QHostAddress(QStringLiteral("fd00::1"))}, 4242};
    const auto bytes = TcpAdvert::encode(advert);
    QVERIFY(bytes);
    QCOMPARE(*bytes, v2(host10 + hostV6, 2));
}

void tst_TcpAdvert::roundTrips()
{
    QList<QHostAddress> hosts;
    for (int i = 1; i <= TcpAdvert::MaxHosts; ++i)
        hosts << QHostAddress(QStringLiteral("10.0.%1.1").arg(i));
    const TcpAdvert advert{QStringLiteral("wörld"), QStringLiteral("5f0c-node"), hosts, 65535};
    const auto bytes = TcpAdvert::encode(advert);
    QVERIFY(bytes);
    const auto decoded = TcpAdvert::decode(*bytes);
    QVERIFY2(decoded, whyNot(decoded).constData());
    QCOMPARE(*decoded, advert);
}

void tst_TcpAdvert::readsVersion1()
{
    // A node of the previous release: one host as text.
    const auto decoded = TcpAdvert::decode(header(1, 4242) + text("blue") + text("n1") + text("10.0.0.1"));
    QVERIFY2(decoded, whyNot(decoded).constData());
    QCOMPARE(decoded->hosts, QList<QHostAddress>{QHostAddress(QStringLiteral("10.0.0.1"))});
    QCOMPARE(decoded->port, quint16(4242));
    const auto any = TcpAdvert::decode(header(1, 4242) + text("blue") + text("n1") + text("0.0.0.0"));
    QVERIFY(any);
    QCOMPARE(any->hosts, QList<QHostAddress>{QHostAddress(QHostAddress::AnyIPv4)});
}

void tst_TcpAdvert::refusesMalformed_data()
{
    QTest::addColumn<QByteArray>("datagram");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << QByteArray() << "not an MMPI beacon";
    QTest::newRow("magic") << (QByteArray("MMPX") + v2(host10, 1).mid(4)) << "not an MMPI beacon";
    QTest::newRow("version 3") << (header(3, 4242) + v2(host10, 1).mid(7)) << "beacon version 3";
    QTest::newRow("port 0") << (header(2, 0) + v2(host10, 1).mid(7)) << "listen port 0";
    QTest::newRow("no hosts") << v2({}, 0) << "0 hosts";
    QTest::newRow("nine hosts") << v2(host10.repeated(9), 9) << "9 hosts";
    QTest::newRow("count beyond the data") << v2(host10, 2) << "truncated";
    QTest::newRow("cut address") << v2(host10.first(3), 1) << "truncated";
    QTest::newRow("cut v6") << v2(hostV6.first(10), 1) << "truncated";
    QTest::newRow("family 5") << v2(QByteArray::fromHex("050a000001"), 1) << "host family 5";
    QTest::newRow("trailing byte") << (v2(host10, 1) + '\0') << "1 bytes after the last field";
    QTest::newRow("twice") << v2(host10 + host10, 2) << "listed twice";
    QTest::newRow("multicast") << v2(QByteArray::fromHex("04e0000001"), 1) << "not a unicast address";
    QTest::newRow("broadcast") << v2(QByteArray::fromHex("04ffffffff"), 1) << "not a unicast address";
    QTest::newRow("no count") << (header(2, 4242) + text("blue") + text("n1")) << "the host count is missing";
    QTest::newRow("cut string") << (header(2, 4242) + char(10) + "blue") << "truncated or not UTF-8";
    QTest::newRow("bad utf-8") << (header(2, 4242) + text("blue") + text("\xC3") + char(1) + host10)
                               << "truncated or not UTF-8";
    QTest::newRow("empty world") << (header(2, 4242) + text("") + text("n1") + char(1) + host10)
                                 << "empty world name";
    QTest::newRow("v1 bad host") << (header(1, 4242) + text("blue") + text("n1") + text("nope"))
                                 << "is not an IP address";
    QTest::newRow("oversized") << (v2(host10, 1) + QByteArray(600, 'x')) << "more than 512";
}

void tst_TcpAdvert::refusesMalformed()
{
    QFETCH(QByteArray, datagram);
    QFETCH(QString, reason);
    const auto decoded = TcpAdvert::decode(datagram);
    QVERIFY(!decoded);
    QCOMPARE(decoded.error().code, ErrorCode::DiscoveryFailed);
    QVERIFY2(decoded.error().message.contains(reason), qPrintable(decoded.error().message));
}

void tst_TcpAdvert::refusesWhatCannotBeSent()
{
    TcpAdvert advert{QStringLiteral("blue"), QStringLiteral("n1"), {}, 4242};
    QVERIFY(!TcpAdvert::encode(advert)); // no host
    advert.hosts = {QHostAddress(QStringLiteral("10.0.0.1"))};
    advert.worldName = QString(200, u'w');
    advert.nodeId = QString(200, u'n');
    advert.hosts.clear();
    for (int i = 1; i <= TcpAdvert::MaxHosts; ++i)
        advert.hosts << QHostAddress(QStringLiteral("fd00::%1").arg(i));
    const auto tooBig = TcpAdvert::encode(advert);
    QVERIFY(!tooBig);
    QVERIFY2(tooBig.error().message.contains(QStringLiteral("exceeds the beacon limit")),
             qPrintable(tooBig.error().message));
}

void tst_TcpAdvert::triesTheSenderFirst()
{
    const QHostAddress a(QStringLiteral("10.0.0.1")), b(QStringLiteral("192.168.1.7"));
    const TcpAdvert advert{QStringLiteral("blue"), QStringLiteral("n1"), {a, b}, 4242};
    // The datagram came from the second address: that path works, try it first.
    QCOMPARE(advert.addressesFrom(b), (QStringList{QStringLiteral("tcp://192.168.1.7:4242"),
                                                   QStringLiteral("tcp://10.0.0.1:4242")}));
    // From an address it does not list (a NAT): its own order.
    QCOMPARE(advert.addressesFrom(QHostAddress(QStringLiteral("172.16.0.9"))),
             (QStringList{QStringLiteral("tcp://10.0.0.1:4242"), QStringLiteral("tcp://192.168.1.7:4242")}));
    // "Any": the sender's address stands in for it.
    const TcpAdvert any{QStringLiteral("blue"), QStringLiteral("n1"), {QHostAddress(QHostAddress::AnyIPv4)}, 4242};
    QCOMPARE(any.addressesFrom(a), QStringList{QStringLiteral("tcp://10.0.0.1:4242")});
}

void tst_TcpAdvert::worldAnnouncementHasItsBytes()
{
    // Given the root n1 of world blue on ada, two of three joined, for 2 s ...
    const TcpAdvert advert{QStringLiteral("blue"), QStringLiteral("n1"), {QHostAddress(QStringLiteral("10.0.0.1"))},
                           4242, TcpAdvert::World{QStringLiteral("ada"), 2, 3, 2}};
    const auto bytes = TcpAdvert::encode(advert);
    QVERIFY2(bytes, whyNot(bytes).constData());
    // ... the datagram is the beacon's with magic MMPW, version 1 and the world's fields after the hosts.
    QCOMPARE(bytes->toHex(), QByteArray("4d4d5057" "01" "1092" "04626c7565" "026e31" "01" "040a000001"
                                        "03616461" "0002" "0003" "0002"));
    const auto back = TcpAdvert::decode(*bytes);
    QVERIFY2(back, whyNot(back).constData());
    QCOMPARE(*back, advert);
}

void tst_TcpAdvert::refusesMalformedWorldAnnouncements()
{
    TcpAdvert advert{QStringLiteral("blue"), QStringLiteral("n1"), {QHostAddress(QStringLiteral("10.0.0.1"))}, 4242,
                     TcpAdvert::World{QStringLiteral("ada"), 2, 3, 2}};
    const QByteArray good = *TcpAdvert::encode(advert);
    QByteArray version2 = good;
    version2[4] = 2;
    QByteArray badHost = good;
    badHost[good.size() - 7] = char(0xff);
    QByteArray tooMany = good;
    tooMany[good.size() - 6] = char(0x10); // joined 4098
    for (const QByteArray &bad : {good.left(good.size() - 1), good + 'x', version2, badHost, tooMany}) {
        const auto decoded = TcpAdvert::decode(bad);
        QVERIFY2(!decoded, qPrintable(bad.toHex()));
        QCOMPARE(decoded.error().code, ErrorCode::DiscoveryFailed);
    }
    advert.world->hostName = QString(64, u'h');
    QVERIFY(!TcpAdvert::encode(advert));
    advert.world = TcpAdvert::World{QString(), 5000, 3, 2};
    QVERIFY(!TcpAdvert::encode(advert));
}

QTEST_GUILESS_MAIN(tst_TcpAdvert)
#include "tst_tcpadvert.moc"
