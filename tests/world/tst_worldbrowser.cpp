// WorldBrowser over the tcp transport on loopback (world announcements and
// beacons to 127.0.0.1 only; no DNS-SD, since lo cannot multicast): a root
// of a discovered world is listed with its name and counts as nodes join,
// joinConfig() joins it, and it goes at the root's goodbye once formed. An
// announcement not heard again goes when its time to live runs out, and
// malformed or flooding datagrams do not get into the list.
#include <mmpi/world/world.h>
#include <mmpi/world/worldbrowser.h>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QUdpSocket>
#include <QtEndian>

#include <memory>

using namespace mmpi;

namespace {

template<typename T>
QByteArray whyNot(const mmpi::Result<T> &result)
{
    return result ? QByteArray() : result.error().toString().toUtf8();
}

quint16 freeUdpPort()
{
    QUdpSocket socket;
    socket.bind(QHostAddress::LocalHost, 0);
    return socket.localPort();
}

struct Announcement
{
    QByteArray name = "spoofed";
    QByteArray rootId = "r1";
    QByteArray host = "h";
    quint16 joined = 1;
    quint16 wanted = 2;
    quint16 ttl = 1;
};

// A world announcement datagram, as docs/guide/transports.md lays it out.
QByteArray datagram(const Announcement &a)
{
    const auto u16 = [](quint16 v) {
        QByteArray b(2, 0);
        qToBigEndian(v, b.data());
        return b;
    };
    return QByteArray("MMPW") + char(1) + u16(4242) + char(a.name.size()) + a.name + char(a.rootId.size()) + a.rootId
         + char(1) + char(4) + QByteArray::fromHex("7f000001") + char(a.host.size()) + a.host + u16(a.joined)
         + u16(a.wanted) + u16(a.ttl);
}

} // namespace

class tst_WorldBrowser : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void rootIsListedUpdatedJoinedAndGone();
    void announcementExpires();
    void hostileDatagramsStayOut();
    void floodIsCapped();
    void refusals();

private:
    WorldConfig config(const QString &name, int rank) const;
    void send(const QByteArray &bytes) const;

    QVariantMap m_options;
    quint16 m_lobbyPort = 0;
};

void tst_WorldBrowser::init()
{
    m_lobbyPort = freeUdpPort();
    m_options = {{QStringLiteral("beaconPort"), freeUdpPort()},
                 {QStringLiteral("lobbyPort"), m_lobbyPort},
                 {QStringLiteral("beaconTargets"), QStringList{QStringLiteral("127.0.0.1")}},
                 {QStringLiteral("interfaces"), QStringList{QStringLiteral("lo")}},
                 {QStringLiteral("dnsSdBackend"), QStringLiteral("builtin")},
                 {QStringLiteral("beaconInterval"), 100}};
}

WorldConfig tst_WorldBrowser::config(const QString &name, int rank) const
{
    WorldConfig c;
    c.mode = WorldConfig::Mode::Discovered;
    c.transport = QStringLiteral("tcp");
    c.transportOptions = m_options;
    c.worldName = name;
    c.size = 3;
    c.rank = rank;
    c.worldKey = QByteArray(32, 'k');
    c.formationTimeout = std::chrono::milliseconds(30000);
    c.discoveryTimeout = c.formationTimeout;
    c.discoverySteps = {World::DiscoveryStep::Beacon};
    return c;
}

void tst_WorldBrowser::send(const QByteArray &bytes) const
{
    QUdpSocket socket;
    QVERIFY(socket.writeDatagram(bytes, QHostAddress::LocalHost, m_lobbyPort) == bytes.size());
}

void tst_WorldBrowser::rootIsListedUpdatedJoinedAndGone()
{
    WorldBrowser browser;
    QSignalSpy found(&browser, &WorldBrowser::worldFound);
    QSignalSpy updated(&browser, &WorldBrowser::worldUpdated);
    QSignalSpy lost(&browser, &WorldBrowser::worldLost);
    const auto started = browser.start(QStringLiteral("tcp"), m_options);
    QVERIFY2(started, whyNot(started).constData());

    // Given the root of a world of three ...
    World root;
    root.form(config(QStringLiteral("lobby-a"), 0));
    // ... the browser lists it, with its name, one of three joined, by beacon.
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().size(), 1, 10000);
    const WorldBrowser::FoundWorld first = browser.worlds().first();
    QCOMPARE(first.name, QStringLiteral("lobby-a"));
    QCOMPARE(first.rootId, root.nodeId());
    QCOMPARE(first.joined, 1);
    QCOMPARE(first.wanted, 3);
    QCOMPARE(first.foundBy, WorldBrowser::FoundBy::Beacon);
    QVERIFY2(!first.addresses.isEmpty() && first.addresses.first().startsWith(QStringLiteral("tcp://127.0.0.1:")),
             qPrintable(first.addresses.join(u' ')));
    QCOMPARE(found.size(), 1);

    // When a node joins, the count follows.
    World a;
    a.form(config(QStringLiteral("lobby-a"), NoRank));
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().value(0).joined, 2, 10000);
    QVERIFY(!updated.isEmpty());

    // Picking it: a node that knew no world name joins the listed one.
    WorldConfig blank = config(QString(), NoRank);
    const auto joining = browser.joinConfig(first.rootId, blank);
    QVERIFY2(joining, whyNot(joining).constData());
    QCOMPARE(joining->worldName, QStringLiteral("lobby-a"));
    QCOMPARE(joining->size, 3);
    World b;
    b.form(*joining);
    for (World *w : {&root, &a, &b}) {
        const auto formed = w->waitForFormed();
        QVERIFY2(formed, whyNot(formed).constData());
        QCOMPARE(w->size(), 3);
    }
    // Formed, the root withdraws the world: its goodbye, not a time-out, removes it.
    QTRY_COMPARE_WITH_TIMEOUT(lost.size(), 1, 10000);
    QCOMPARE(lost.first().first().toString(), root.nodeId());
    QVERIFY(browser.worlds().isEmpty());
    for (World *w : {&root, &a, &b})
        w->closeAndWait();
}

void tst_WorldBrowser::announcementExpires()
{
    WorldBrowser browser;
    QSignalSpy lost(&browser, &WorldBrowser::worldLost);
    QVERIFY(browser.start(QStringLiteral("tcp"), m_options));
    // Given one announcement of another world (a spoof is fine to list) that
    // holds for one second and is not sent again ...
    QElapsedTimer clock;
    clock.start();
    send(datagram({}));
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().size(), 1, 5000);
    const WorldBrowser::FoundWorld w = browser.worlds().first();
    QCOMPARE(w.name, QStringLiteral("spoofed"));
    QCOMPARE(w.host, QStringLiteral("h"));
    QCOMPARE(w.addresses, QStringList{QStringLiteral("tcp://127.0.0.1:4242")});
    // ... it goes once its time to live has run out, not before.
    QTRY_COMPARE_WITH_TIMEOUT(lost.size(), 1, 5000);
    QVERIFY2(clock.elapsed() >= 1000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(browser.worlds().isEmpty());
    // A refreshed one with new counts is an update, a time to live of 0 a goodbye.
    QSignalSpy updated(&browser, &WorldBrowser::worldUpdated);
    send(datagram({.ttl = 30}));
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().size(), 1, 5000);
    send(datagram({.joined = 2, .ttl = 30}));
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().value(0).joined, 2, 5000);
    QCOMPARE(updated.size(), 1);
    send(datagram({.joined = 2, .ttl = 0}));
    QTRY_COMPARE_WITH_TIMEOUT(lost.size(), 2, 5000);
}

void tst_WorldBrowser::hostileDatagramsStayOut()
{
    WorldBrowser browser;
    QVERIFY(browser.start(QStringLiteral("tcp"), m_options));
    const QByteArray good = datagram({.ttl = 30});
    QByteArray badUtf8 = datagram({.host = QByteArray("\xff\xfe"), .ttl = 30});
    QByteArray hugeCount = datagram({.joined = 5000, .ttl = 30});
    QByteArray longHost = datagram({.host = QByteArray(64, 'x'), .ttl = 30});
    for (const QByteArray &bad : {good.left(good.size() - 1), good + 'x', badUtf8, hugeCount, longHost,
                                  QByteArray("MMPW") + QByteArray(600, '\xff'), QByteArray("MMPW\x02") + good.mid(5)})
        send(bad);
    // Sent last, and datagrams of one socket on loopback keep their order:
    // once it is listed, every bad one before it was refused.
    send(datagram({.rootId = "marker", .ttl = 30}));
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().size(), 1, 5000);
    QCOMPARE(browser.worlds().first().rootId, QStringLiteral("marker"));
}

void tst_WorldBrowser::floodIsCapped()
{
    WorldBrowser browser;
    QVERIFY(browser.start(QStringLiteral("tcp"), m_options));
    for (int i = 0; i < WorldBrowser::MaxWorlds + 20; ++i)
        send(datagram({.rootId = "flood" + QByteArray::number(i), .ttl = 30}));
    QTRY_COMPARE_WITH_TIMEOUT(browser.worlds().size(), WorldBrowser::MaxWorlds, 5000);
    // What came first stays: no later one pushed it out.
    QCOMPARE(browser.worlds().first().rootId, QStringLiteral("flood0"));
    QTest::qWait(300);
    QCOMPARE(browser.worlds().size(), WorldBrowser::MaxWorlds);
}

void tst_WorldBrowser::refusals()
{
    WorldBrowser browser;
    const auto local = browser.start(QStringLiteral("local"));
    QVERIFY(!local);
    QCOMPARE(local.error().code, ErrorCode::DiscoveryFailed);
    QVERIFY(!browser.isBrowsing());
    const auto unknown = browser.start(QStringLiteral("no-such-transport"));
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::UnknownTransport);
    const auto badOption = browser.start(QStringLiteral("tcp"), {{QStringLiteral("lobbyPort"), 0}});
    QVERIFY(!badOption);
    QCOMPARE(badOption.error().code, ErrorCode::BadConfiguration);
    QVERIFY(browser.start(QStringLiteral("tcp"), m_options));
    const auto none = browser.joinConfig(QStringLiteral("nobody"));
    QVERIFY(!none);
    QCOMPARE(none.error().code, ErrorCode::DiscoveryFailed);
}

QTEST_GUILESS_MAIN(tst_WorldBrowser)
#include "tst_worldbrowser.moc"
