// The rule that picks LAN discovery's interfaces (InterfaceFilter), on
// described interfaces so that it does not depend on this host's: up,
// not loopback, not virtual by name or for want of a hardware device; or
// exactly the interfaces an app names, as long as they are up.
#include <mmpi/transport/interfacefilter.h>

#include <QTest>

using namespace mmpi;

class tst_InterfaceFilter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void virtualNames_data();
    void virtualNames();
    void defaultRule_data();
    void defaultRule();
    void namedInterfaces();
    void hostInterfacesFollowTheRule();
};

void tst_InterfaceFilter::virtualNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("isVirtual");
    for (const char *name : {"docker0", "br-3f2a9c1d0e4b", "veth1a2b3c", "virbr0", "tun0", "tap1", "wg0"})
        QTest::newRow(name) << QString::fromLatin1(name) << true;
    for (const char *name : {"eth0", "wlan0", "enp3s0", "wlp2s0", "bridge0", "lo", "usb0", "rmnet0"})
        QTest::newRow(name) << QString::fromLatin1(name) << false;
}

void tst_InterfaceFilter::virtualNames()
{
    QFETCH(QString, name);
    QFETCH(bool, isVirtual);
    QCOMPARE(InterfaceFilter::hasVirtualName(name), isVirtual);
}

void tst_InterfaceFilter::defaultRule_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("up");
    QTest::addColumn<bool>("loopback");
    QTest::addColumn<bool>("hasDevice");
    QTest::addColumn<QString>("reason");
    QTest::newRow("wifi") << "wlan0" << true << false << true << "";
    QTest::newRow("ethernet") << "enp3s0" << true << false << true << "";
    QTest::newRow("down") << "wlan0" << false << false << true << "down";
    QTest::newRow("loopback") << "lo" << true << true << false << "loopback";
    QTest::newRow("docker bridge") << "docker0" << true << false << false
                                   << "virtual (a container, VM or VPN interface by its name)";
    // A name alone is not trusted either way: a tunnel with a device is still a tunnel.
    QTest::newRow("vpn with device") << "tun0" << true << false << true
                                     << "virtual (a container, VM or VPN interface by its name)";
    QTest::newRow("dummy") << "dummy0" << true << false << false << "virtual (no hardware device)";
    QTest::newRow("renamed veth") << "eth0" << true << false << false << "virtual (no hardware device)";
}

void tst_InterfaceFilter::defaultRule()
{
    QFETCH(QString, name);
    QFETCH(bool, up);
    QFETCH(bool, loopback);
    QFETCH(bool, hasDevice);
    QFETCH(QString, reason);
    QCOMPARE(InterfaceFilter().exclusionReason({name, up, loopback, hasDevice}), reason);
}

void tst_InterfaceFilter::namedInterfaces()
{
    // Given the app names two interfaces, when asked about others, then only
    // those two are used: virtual or loopback, as asked, but never down.
    const InterfaceFilter filter({QStringLiteral("eth0"), QStringLiteral("lo")});
    QCOMPARE(filter.exclusionReason({QStringLiteral("eth0"), true, false, false}), QString());
    QCOMPARE(filter.exclusionReason({QStringLiteral("lo"), true, true, false}), QString());
    QCOMPARE(filter.exclusionReason({QStringLiteral("lo"), false, true, false}), QStringLiteral("down"));
    QCOMPARE(filter.exclusionReason({QStringLiteral("wlan0"), true, false, true}),
             QStringLiteral("not among the interfaces asked for (eth0, lo)"));
}

void tst_InterfaceFilter::hostInterfacesFollowTheRule()
{
    // This host's kept interfaces are exactly those the rule keeps, and their
    // addresses are theirs: IPv4 first, no link-local IPv6, no loopback.
    const InterfaceFilter filter;
    QStringList kept;
    for (const QNetworkInterface &interface : filter.interfaces()) {
        QVERIFY2(filter.exclusionReason(InterfaceFilter::factsOf(interface)).isEmpty(), qPrintable(interface.name()));
        kept << interface.name();
    }
    for (const QNetworkInterface &interface : QNetworkInterface::allInterfaces())
        QCOMPARE(kept.contains(interface.name()), filter.exclusionReason(InterfaceFilter::factsOf(interface)).isEmpty());
    bool seenV6 = false;
    for (const QHostAddress &address : filter.addresses()) {
        QVERIFY(!address.isLoopback());
        QVERIFY(!(address.protocol() == QAbstractSocket::IPv6Protocol && address.isLinkLocal()));
        if (address.protocol() == QAbstractSocket::IPv6Protocol)
            seenV6 = true;
        else
            QVERIFY2(!seenV6, "IPv4 addresses come first");
    }
    // Named loopback is used: this works on every host.
    const InterfaceFilter loopback({QStringLiteral("lo")});
    if (QNetworkInterface::interfaceFromName(QStringLiteral("lo")).isValid())
        QVERIFY(loopback.addresses().contains(QHostAddress(QHostAddress::LocalHost)));
}

QTEST_GUILESS_MAIN(tst_InterfaceFilter)
#include "tst_interfacefilter.moc"
