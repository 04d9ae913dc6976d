// tst_discovery_netns: the fallback chain of a discovered tcp world on a
// network the test makes itself (root and `ip`/`bridge` needed, else
// skipped with the reason). Three namespaces, one node each (eth0,
// 10.48.0.1-3/24), hang off a bridge in a fourth that also routes between
// them, as a Wi-Fi access point with client isolation does: with the
// bridge's ports isolated (`bridge link set dev … isolated on`) no broadcast
// reaches another node, but unicast does, through the router's proxy ARP.
// There DNS-SD and then the beacon give up with their reasons within their
// timeouts and the world forms through the join code, or through the root's
// address typed on each node (a typed name that has no address gives that
// step up, saying so); without isolation
// the beacon alone forms it, and so does DNS-SD alone (the tcp transport's
// built-in multicast DNS responder, no Avahi), also with two nodes of one
// namespace sharing UDP port 5353, and through an avahi-daemon in each
// namespace (each on a D-Bus system bus of its own). The root's namespace also
// holds a docker0 that discovery leaves alone. Only addresses inside the namespaces; all of them are removed
// whatever happens.
#include "netns.h"

#include <mmpi/world/joincode.h>

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <memory>

namespace {

// Why a result failed, or nothing (QVERIFY2 evaluates its message always).
template<typename T>
QByteArray whyNot(const mmpi::Result<T> &result)
{
    return result ? QByteArray() : result.error().toString().toUtf8();
}

using namespace mmpi;
using namespace mmpi::test;
using namespace Qt::StringLiterals;

const QString node = QStringLiteral(DISCOVERY_NODE_PATH);
constexpr int BeaconTimeout = 1500;
constexpr int DnsSdTimeout = 1500;

// Namespaces <base>-sw (bridge br0, router 10.48.0.254) and <base>-n0..2.
class Network
{
public:
    static std::unique_ptr<Network> create(QString *error)
    {
        std::unique_ptr<Network> n(new Network);
        const QString sw = n->ns(u"sw"_s);
        QList<QStringList> ip = {{u"netns"_s, u"add"_s, sw},
                                 {u"-n"_s, sw, u"link"_s, u"add"_s, u"br0"_s, u"type"_s, u"bridge"_s},
                                 {u"-n"_s, sw, u"addr"_s, u"add"_s, u"10.48.0.254/24"_s, u"dev"_s, u"br0"_s},
                                 {u"-n"_s, sw, u"link"_s, u"set"_s, u"br0"_s, u"up"_s}};
        for (int i = 0; i < 3; ++i) {
            const QString nsi = n->ns(u"n%1"_s.arg(i)), port = u"p%1"_s.arg(i);
            ip += {{u"netns"_s, u"add"_s, nsi},
                   {u"-n"_s, sw, u"link"_s, u"add"_s, port, u"type"_s, u"veth"_s, u"peer"_s, u"name"_s, u"eth0"_s,
                    u"netns"_s, nsi},
                   {u"-n"_s, sw, u"link"_s, u"set"_s, port, u"master"_s, u"br0"_s, u"up"_s},
                   {u"-n"_s, nsi, u"addr"_s, u"add"_s, u"10.48.0.%1/24"_s.arg(i + 1), u"dev"_s, u"eth0"_s},
                   {u"-n"_s, nsi, u"link"_s, u"set"_s, u"eth0"_s, u"up"_s},
                   {u"-n"_s, nsi, u"link"_s, u"set"_s, u"lo"_s, u"up"_s}};
        }
        // A docker-like interface beside the real one, with Docker's
        // address: one end of a veth pair, as a container's link is (a
        // dummy would do, but not every kernel has the module), both ends
        // up so that it has a carrier and only its name and its want of a
        // device tell it apart.
        const QString n0 = n->ns(u"n0"_s);
        ip += {{u"-n"_s, n0, u"link"_s, u"add"_s, u"docker0"_s, u"type"_s, u"veth"_s, u"peer"_s, u"name"_s,
                u"vethd0"_s},
               {u"-n"_s, n0, u"addr"_s, u"add"_s, u"172.17.0.1/16"_s, u"dev"_s, u"docker0"_s},
               {u"-n"_s, n0, u"link"_s, u"set"_s, u"docker0"_s, u"up"_s},
               {u"-n"_s, n0, u"link"_s, u"set"_s, u"vethd0"_s, u"up"_s}};
        for (const QStringList &step : ip)
            if (!runCommand(u"ip"_s, step, error))
                return nullptr; // the destructor removes what was made
        // The router: forward, answer ARP for the isolated clients on the
        // port they asked on (RFC 3069's private VLAN), and no redirects that
        // would send them to each other directly.
        for (const QString &setting : {u"net.ipv4.ip_forward=1"_s, u"net.ipv4.conf.br0.proxy_arp=1"_s,
                                       u"net.ipv4.conf.br0.proxy_arp_pvlan=1"_s,
                                       u"net.ipv4.conf.all.send_redirects=0"_s, u"net.ipv4.conf.br0.send_redirects=0"_s})
            if (!runCommand(u"ip"_s, {u"netns"_s, u"exec"_s, sw, u"sysctl"_s, u"-qw"_s, setting}, error))
                return nullptr;
        return n;
    }

    ~Network()
    {
        for (const QString &suffix : {u"n0"_s, u"n1"_s, u"n2"_s, u"sw"_s})
            runCommand(u"ip"_s, {u"netns"_s, u"del"_s, ns(suffix)}, nullptr);
    }

    QString ns(const QString &suffix) const { return u"mmpid%1-%2"_s.arg(::getpid()).arg(suffix); }

    bool isolate(bool on, QString *error) const
    {
        for (int i = 0; i < 3; ++i)
            if (!runCommand(u"ip"_s, {u"netns"_s, u"exec"_s, ns(u"sw"_s), u"bridge"_s, u"link"_s, u"set"_s, u"dev"_s,
                               u"p%1"_s.arg(i), u"isolated"_s, on ? u"on"_s : u"off"_s}, error))
                return false;
        return true;
    }

private:
    Network() = default;
};

// A discoverynode in a namespace; its output is read as it comes.
class Node : public NamespacedProcess
{
public:
    Node(const Network &network, int i, const QStringList &args)
        : NamespacedProcess(network.ns(u"n%1"_s.arg(i)), node, args)
    {
    }
};

// `steps`: the discovery steps in order (WorldConfig::discoverySteps).
QStringList nodeArgs(quint16 port, const QString &steps = u"Beacon,JoinCode"_s)
{
    return {u"--size"_s, u"3"_s, u"--interfaces"_s, u"eth0"_s, u"--beacon-port"_s, QString::number(port),
            u"--beacon-timeout"_s, QString::number(BeaconTimeout), u"--dnssd-timeout"_s,
            QString::number(DnsSdTimeout), u"--steps"_s, steps, u"--timeout"_s, u"30000"_s};
}

// "STEP gaveup Beacon <ms> ..." -> ms
qint64 stepTime(const QString &line)
{
    return line.section(u' ', 3, 3).toLongLong();
}

// A D-Bus system bus and an avahi-daemon of namespace <base>-n<i>, their
// files in `dir`, as on a Linux desktop (Avahi owns org.freedesktop.Avahi
// on the system bus). The daemon runs with a tmpfs over /run, its own in
// the mount namespace `ip netns exec` makes: each daemon keeps its pid file
// there, and the host's /run stays as it was. Both are killed when this goes.
class AvahiHost
{
public:
    AvahiHost(const Network &network, int i, const QString &dir)
        : m_socket(u"%1/bus%2"_s.arg(dir).arg(i)), m_ns(network.ns(u"n%1"_s.arg(i)))
    {
        const QString busConfig = u"%1/bus%2.conf"_s.arg(dir).arg(i);
        const QString avahiConfig = u"%1/avahi%2.conf"_s.arg(dir).arg(i);
        writeFile(busConfig, u"<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                             u" \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                             u"<busconfig><type>system</type><listen>unix:path=%1</listen><auth>EXTERNAL</auth>\n"
                             u"<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
                             u"<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy></busconfig>\n"_s
                                 .arg(m_socket));
        // Its own host name (the namespaces share the host's), IPv4 on eth0 only.
        writeFile(avahiConfig, u"[server]\nhost-name=mmpi-avahi-%1-%2\nuse-ipv4=yes\nuse-ipv6=no\n"
                               u"allow-interfaces=eth0\nenable-dbus=yes\n[wide-area]\nenable-wide-area=no\n"
                               u"[publish]\npublish-hinfo=no\npublish-workstation=no\n"_s
                                   .arg(::getpid()).arg(i));
        m_bus = std::make_unique<NamespacedProcess>(
            m_ns, u"dbus-daemon"_s, QStringList{u"--config-file="_s + busConfig, u"--nofork"_s, u"--nopidfile"_s});
        for (int wait = 0; wait < 50 && !QFile::exists(m_socket); ++wait)
            QThread::msleep(100);
        m_avahi = std::make_unique<NamespacedProcess>(
            m_ns, u"env"_s,
            QStringList{u"DBUS_SYSTEM_BUS_ADDRESS="_s + busAddress(), u"sh"_s, u"-c"_s,
                        u"mount -t tmpfs none /run && mkdir -p /run/avahi-daemon && exec avahi-daemon "
                        u"--no-drop-root --no-chroot --no-rlimits --no-proc-title -f "_s
                            + avahiConfig});
    }

    QString busAddress() const { return u"unix:path="_s + m_socket; }
    QString ns() const { return m_ns; }

    // Whether the daemon reached state RUNNING (its host name established) within `ms`.
    bool waitRunning(int ms)
    {
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < ms) {
            const ProcessRun r = runProcess(u"env"_s, {u"DBUS_SYSTEM_BUS_ADDRESS="_s + busAddress(), u"dbus-send"_s,
                                                       u"--system"_s, u"--print-reply"_s,
                                                       u"--dest=org.freedesktop.Avahi"_s, u"/"_s,
                                                       u"org.freedesktop.Avahi.Server.GetState"_s},
                                            {.timeoutMs = 2000});
            if (r.exitCode == 0 && r.out.contains(u"int32 2"_s))
                return true;
            QThread::msleep(100);
        }
        return false;
    }
    QString output() { return m_avahi->output(); }

private:
    static void writeFile(const QString &path, const QString &text)
    {
        QFile file(path);
        if (file.open(QIODevice::WriteOnly))
            file.write(text.toUtf8());
    }

    QString m_socket;
    QString m_ns;
    // The daemon goes before its bus.
    std::unique_ptr<NamespacedProcess> m_bus;
    std::unique_ptr<NamespacedProcess> m_avahi;
};

// Why the Avahi tests cannot run here, or empty. The Avahi path needs the
// daemons; tools/dev installs them, so CI runs it.
QString whyNoAvahi()
{
    const QString why = whyNoNamespaces({u"avahi-daemon"_s, u"dbus-daemon"_s, u"dbus-send"_s});
    if (why.isEmpty())
        return why;
    return why + u": the Avahi backend is tested only where avahi-daemon and dbus are installed "
                 "(apt-get install avahi-daemon dbus)"_s;
}

// A node in `host`'s namespace that speaks to its avahi-daemon.
std::unique_ptr<NamespacedProcess> avahiNode(const AvahiHost &host, const QString &program, const QStringList &args)
{
    return std::make_unique<NamespacedProcess>(
        host.ns(), u"env"_s,
        QStringList{u"DBUS_SYSTEM_BUS_ADDRESS="_s + host.busAddress(), u"QT_LOGGING_RULES=mmpi.transport.debug=true"_s,
                    program}
            + args);
}

} // namespace

class tst_DiscoveryNetns : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup() { m_network.reset(); }
    void dockerInterfaceIsLeftAlone();
    void beaconAloneFormsAnOpenNetwork();
    void joinCodeFormsAnIsolatedNetwork();
    void dnsSdAloneFormsAnOpenNetwork();
    void wholeChainOnAnIsolatedNetwork();
    void typedAddressFormsAnIsolatedNetwork();
    void typedNameWithoutAddressGivesUp();
    void nodesOfOneHostShareTheMdnsPort();
    void avahiFormsAnOpenNetwork();
    void chooserListsAndJoinsAWorld();
    void avahiCarriesWorldAnnouncements();

private:
    // A system bus and an avahi-daemon in each of the 3 namespaces, running,
    // their files in `dir`; on failure the test has failed.
    std::vector<std::unique_ptr<AvahiHost>> startAvahiHosts(const QString &dir);

    std::unique_ptr<Network> m_network;
};

std::vector<std::unique_ptr<AvahiHost>> tst_DiscoveryNetns::startAvahiHosts(const QString &dir)
{
    std::vector<std::unique_ptr<AvahiHost>> hosts;
    for (int i = 0; i < 3; ++i)
        hosts.push_back(std::make_unique<AvahiHost>(*m_network, i, dir));
    for (auto &host : hosts)
        if (!host->waitRunning(15000)) {
            QTest::qFail(qPrintable(host->output()), __FILE__, __LINE__);
            return {};
        }
    return hosts;
}

void tst_DiscoveryNetns::init()
{
    if (const QString why = whyNoNamespaces({u"ip"_s, u"bridge"_s, u"sysctl"_s}); !why.isEmpty())
        QSKIP(qPrintable(why));
    QString error;
    m_network = Network::create(&error);
    QVERIFY2(m_network, qPrintable(error));
}

void tst_DiscoveryNetns::dockerInterfaceIsLeftAlone()
{
    // The default rule, on the kernel's own interfaces: docker0 is virtual
    // by its name, the namespace's eth0 (a veth) for want of a device.
    Node rule(*m_network, 0, {u"--list-interfaces"_s});
    QVERIFY2(rule.finishedWell(10000), qPrintable(rule.output()));
    const QString out = rule.output();
    QVERIFY2(out.contains(u"INTERFACE docker0 virtual (a container, VM or VPN interface by its name)"_s), qPrintable(out));
    QVERIFY2(out.contains(u"INTERFACE eth0 virtual (no hardware device)"_s), qPrintable(out));
    QVERIFY2(out.contains(u"INTERFACE lo loopback"_s), qPrintable(out));
    // The root's join code, from the interfaces kept, has eth0's address
    // and not docker0's.
    Node root(*m_network, 0, QStringList{u"--root"_s, u"--make-code"_s} + nodeArgs(47481));
    const QString code = root.waitForLine(u"CODE "_s, 10000).mid(5);
    QVERIFY2(!code.isEmpty(), qPrintable(root.output()));
    const auto parsed = JoinCode::parse(code);
    QVERIFY2(parsed, whyNot(parsed).constData());
    QCOMPARE(parsed->addresses(), QList<QHostAddress>{QHostAddress(u"10.48.0.1"_s)});
}

void tst_DiscoveryNetns::beaconAloneFormsAnOpenNetwork()
{
    Node root(*m_network, 0, QStringList{u"--root"_s, u"--make-code"_s} + nodeArgs(47482));
    const QString code = root.waitForLine(u"CODE "_s, 10000).mid(5);
    QVERIFY2(!code.isEmpty(), qPrintable(root.output()));
    Node a(*m_network, 1, nodeArgs(47482) + QStringList{u"--join-code"_s, code});
    Node b(*m_network, 2, nodeArgs(47482) + QStringList{u"--join-code"_s, code});
    for (Node *n : {&root, &a, &b}) {
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
        // Broadcasts arrive: no step gave up.
        QVERIFY2(!n->output().contains(u"STEP gaveup"_s), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::joinCodeFormsAnIsolatedNetwork()
{
    QString error;
    QVERIFY2(m_network->isolate(true, &error), qPrintable(error));
    Node root(*m_network, 0, QStringList{u"--root"_s, u"--make-code"_s} + nodeArgs(47483));
    const QString code = root.waitForLine(u"CODE "_s, 10000).mid(5);
    QVERIFY2(!code.isEmpty(), qPrintable(root.output()));
    static const QRegularExpression gaveUp(u"^STEP gaveup Beacon \\d+ DiscoveryTimedOut no (advert|root) of world "
                                           u"'netns' (heard|answered this node's adverts) within 1500 ms"_s);
    // The root's beacon gives up before the nodes start: a root slow to
    // start would otherwise hear a node's join-code advert first, and
    // rightly not give up.
    {
        const QString line = root.waitForLine(u"STEP gaveup Beacon"_s, 10000);
        QVERIFY2(gaveUp.match(line).hasMatch(), qPrintable(root.output()));
    }
    Node a(*m_network, 1, nodeArgs(47483) + QStringList{u"--join-code"_s, code});
    Node b(*m_network, 2, nodeArgs(47483) + QStringList{u"--join-code"_s, code});
    for (Node *n : {&root, &a, &b}) {
        // Given isolated ports, the beacon gives up within its timeout, says why ...
        const QString line = n->waitForLine(u"STEP gaveup Beacon"_s, 10000);
        QVERIFY2(gaveUp.match(line).hasMatch(), qPrintable(n->output()));
        QVERIFY2(stepTime(line) >= BeaconTimeout && stepTime(line) < BeaconTimeout + 1500, qPrintable(line));
        QVERIFY2(!n->waitForLine(u"STEP started JoinCode"_s, 1000).isEmpty(), qPrintable(n->output()));
    }
    for (Node *n : {&root, &a, &b}) {
        // ... and the world forms through the join code.
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::dnsSdAloneFormsAnOpenNetwork()
{
    // Given DNS-SD as the only step (no beacon is ever sent) ...
    const QString steps = u"DnsSd"_s;
    Node root(*m_network, 0, QStringList{u"--root"_s} + nodeArgs(47484, steps));
    Node a(*m_network, 1, nodeArgs(47484, steps));
    Node b(*m_network, 2, nodeArgs(47484, steps));
    for (Node *n : {&root, &a, &b}) {
        // ... the world of three forms, each node found by multicast DNS.
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
        QVERIFY2(n->output().contains(u"STEP started DnsSd"_s), qPrintable(n->output()));
        QVERIFY2(!n->output().contains(u"STEP gaveup"_s), qPrintable(n->output()));
        QVERIFY2(!n->output().contains(u"STEP started Beacon"_s), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::wholeChainOnAnIsolatedNetwork()
{
    QString error;
    QVERIFY2(m_network->isolate(true, &error), qPrintable(error));
    const QString steps = u"DnsSd,Beacon,JoinCode"_s;
    Node root(*m_network, 0, QStringList{u"--root"_s, u"--make-code"_s} + nodeArgs(47485, steps));
    const QString code = root.waitForLine(u"CODE "_s, 10000).mid(5);
    QVERIFY2(!code.isEmpty(), qPrintable(root.output()));
    // The nodes start once the root's chain is at its join code: a node's
    // join-code advert heard during the root's beacon step would rightly
    // keep that step from giving up.
    QVERIFY2(!root.waitForLine(u"STEP started JoinCode"_s, 10000).isEmpty(), qPrintable(root.output()));
    Node a(*m_network, 1, nodeArgs(47485, steps) + QStringList{u"--join-code"_s, code});
    Node b(*m_network, 2, nodeArgs(47485, steps) + QStringList{u"--join-code"_s, code});
    static const QRegularExpression dnsSdGaveUp(
        u"^STEP gaveup DnsSd \\d+ DiscoveryTimedOut no (DNS-SD answer|root) of world 'netns' (heard|answered "
        u"this node's DNS-SD adverts) within 1500 ms over transport tcp \\(multicast blocked"_s);
    for (Node *n : {&root, &a, &b}) {
        // Given isolated ports, DNS-SD gives up first, within its timeout and saying why ...
        const QString line = n->waitForLine(u"STEP gaveup DnsSd"_s, 10000);
        QVERIFY2(dnsSdGaveUp.match(line).hasMatch(), qPrintable(n->output()));
        QVERIFY2(stepTime(line) >= DnsSdTimeout && stepTime(line) < DnsSdTimeout + 1500, qPrintable(n->output()));
        // ... then the beacon, which began only when DNS-SD gave up ...
        const QString beacon = n->waitForLine(u"STEP gaveup Beacon"_s, 10000);
        QVERIFY2(!beacon.isEmpty(), qPrintable(n->output()));
        QVERIFY2(stepTime(beacon) >= DnsSdTimeout + BeaconTimeout, qPrintable(n->output()));
        QVERIFY2(!n->waitForLine(u"STEP started JoinCode"_s, 1000).isEmpty(), qPrintable(n->output()));
    }
    for (Node *n : {&root, &a, &b}) {
        // ... and the world forms through the join code.
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::typedAddressFormsAnIsolatedNetwork()
{
    QString error;
    QVERIFY2(m_network->isolate(true, &error), qPrintable(error));
    // The default chain; no join code anywhere, so JoinCode is passed over.
    // A typed address carries no key: a closed world gives it to each node.
    const QString steps = u"DnsSd,Beacon,JoinCode,Address"_s;
    const QStringList key{u"--key"_s, u"typed"_s};
    Node root(*m_network, 0, QStringList{u"--root"_s} + nodeArgs(47491, steps) + key);
    static const QRegularExpression dnsSdGaveUp(
        u"^STEP gaveup DnsSd \\d+ DiscoveryTimedOut no (DNS-SD answer|root) of world 'netns' (heard|answered "
        u"this node's DNS-SD adverts) within 1500 ms over transport tcp \\(multicast blocked"_s);
    static const QRegularExpression beaconGaveUp(u"^STEP gaveup Beacon \\d+ DiscoveryTimedOut no (advert|root) of "
                                                 u"world 'netns' (heard|answered this node's adverts) within 1500 ms"_s);
    // The root's beacon gives up before the nodes start, as with the join code.
    QVERIFY2(beaconGaveUp.match(root.waitForLine(u"STEP gaveup Beacon"_s, 10000)).hasMatch(), qPrintable(root.output()));
    // The root's address as a person reads it off its screen: no port, so
    // the nodes' beacon port, which is the root's.
    const QStringList typed{u"--root-address"_s, u"10.48.0.1"_s};
    Node a(*m_network, 1, nodeArgs(47491, steps) + typed + key);
    Node b(*m_network, 2, nodeArgs(47491, steps) + typed + key);
    for (Node *n : {&root, &a, &b}) {
        // Given isolated ports, DNS-SD and the beacon give up in turn, saying why ...
        const QString dnsSd = n->waitForLine(u"STEP gaveup DnsSd"_s, 10000);
        QVERIFY2(dnsSdGaveUp.match(dnsSd).hasMatch(), qPrintable(n->output()));
        const QString beacon = n->waitForLine(u"STEP gaveup Beacon"_s, 10000);
        QVERIFY2(beaconGaveUp.match(beacon).hasMatch(), qPrintable(n->output()));
        QVERIFY2(stepTime(beacon) >= stepTime(dnsSd), qPrintable(n->output()));
        // ... then the typed address begins (the root listens for it) ...
        const QString address = n->waitForLine(u"STEP started Address"_s, 1000);
        QVERIFY2(!address.isEmpty(), qPrintable(n->output()));
        QVERIFY2(address.section(u' ', 3, 3).toLongLong() >= stepTime(beacon), qPrintable(n->output()));
    }
    for (Node *n : {&root, &a, &b}) {
        // ... and the world forms through it, no step but those two given up.
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
        QVERIFY2(!n->output().contains(u"STEP started JoinCode"_s), qPrintable(n->output()));
        QVERIFY2(!n->output().contains(u"STEP gaveup Address"_s), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::typedNameWithoutAddressGivesUp()
{
    // Given a name under .invalid (RFC 6761: it never resolves), looked up
    // in a namespace with no route to any name server, so the answer is
    // at once ...
    Node n(*m_network, 1, nodeArgs(47492, u"Address"_s) + QStringList{u"--root-address"_s, u"root.invalid"_s});
    // ... the step that began gives up, naming the entry.
    QVERIFY2(!n.waitForLine(u"STEP started Address"_s, 10000).isEmpty(), qPrintable(n.output()));
    const QString line = n.waitForLine(u"STEP gaveup Address"_s, 10000);
    QVERIFY2(line.contains(u"DiscoveryFailed no IPv4 address of root address 'root.invalid' found"_s),
             qPrintable(n.output()));
}

void tst_DiscoveryNetns::nodesOfOneHostShareTheMdnsPort()
{
    // Given the root and a node in one namespace (one host: both bind UDP
    // port 5353, shared) and a node in another ...
    const QString steps = u"DnsSd"_s;
    Node root(*m_network, 0, QStringList{u"--root"_s} + nodeArgs(47486, steps));
    Node a(*m_network, 0, nodeArgs(47486, steps));
    Node b(*m_network, 1, nodeArgs(47486, steps));
    for (Node *n : {&root, &a, &b}) {
        // ... each hears the other (multicast loopback) and the world forms.
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
        QVERIFY2(!n->output().contains(u"STEP gaveup"_s), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::avahiFormsAnOpenNetwork()
{
    if (const QString why = whyNoAvahi(); !why.isEmpty())
        QSKIP(qPrintable(why));
    // Given a system bus and an avahi-daemon in each namespace ...
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto hosts = startAvahiHosts(dir.path());
    if (hosts.empty())
        return;
    // ... nodes with DNS-SD as their only step publish and browse through it ...
    std::vector<std::unique_ptr<NamespacedProcess>> nodes;
    for (int i = 0; i < 3; ++i) {
        const QStringList args = (i == 0 ? QStringList{u"--root"_s} : QStringList()) + nodeArgs(47487, u"DnsSd"_s);
        nodes.push_back(avahiNode(*hosts[i], node, args));
    }
    for (auto &n : nodes) {
        // ... and the world forms by it.
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
        QVERIFY2(n->output().contains(u"through avahi-daemon"_s), qPrintable(n->output()));
        QVERIFY2(!n->output().contains(u"STEP gaveup"_s), qPrintable(n->output()));
    }
    QVERIFY2(nodes[0]->output().contains(u"FORMED 0 3 "_s), qPrintable(nodes[0]->output()));
}

void tst_DiscoveryNetns::chooserListsAndJoinsAWorld()
{
    // Given the root of a world of three in n0 and one node of it in n2 ...
    const QString world = u"lobby-%1"_s.arg(::getpid());
    const QString steps = u"DnsSd,Beacon"_s;
    Node root(*m_network, 0, QStringList{u"--root"_s, u"--world"_s, world} + nodeArgs(47488, steps));
    Node a(*m_network, 2, QStringList{u"--world"_s, world} + nodeArgs(47488, steps));
    // ... a device in n1 that was told no world name, and hears world
    // announcements only by DNS-SD (its lobby port is not the one the root
    // sends beacon announcements to), lists the world with two of three in ...
    Node chooser(*m_network, 1, QStringList{u"--pick"_s, world, u"--pick-joined"_s, u"2"_s, u"--lobby-port"_s,
                                            u"47499"_s} + nodeArgs(47488, steps));
    const QString picked = chooser.waitForLine(u"PICKED "_s, 30000);
    QVERIFY2(picked == u"PICKED %1 2 3"_s.arg(world), qPrintable(chooser.output()));
    static const QRegularExpression listed(u"^WORLD (found|updated) (\\S+) \\S+ ([12]) 3 (\\S+) (\\S+)$"_s);
    int lines = 0;
    for (const QString &line : chooser.output().split(u'\n')) {
        if (!line.startsWith(u"WORLD "_s))
            continue;
        const auto match = listed.match(line);
        QVERIFY2(match.hasMatch(), qPrintable(line));
        QCOMPARE(match.captured(2), world);
        QCOMPARE(match.captured(4), u"DnsSd"_s);
        ++lines;
    }
    QVERIFY2(lines >= 1, qPrintable(chooser.output()));
    // ... and picking it forms the world of three.
    for (Node *n : {&root, &a, &chooser}) {
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
    }
    QVERIFY2(root.output().contains(u"FORMED 0 3 "_s), qPrintable(root.output()));
}

void tst_DiscoveryNetns::avahiCarriesWorldAnnouncements()
{
    if (const QString why = whyNoAvahi(); !why.isEmpty())
        QSKIP(qPrintable(why));
    // Given an avahi-daemon in each namespace, a root of a world of three
    // in n0 and a node of it in n2 ...
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto hosts = startAvahiHosts(dir.path());
    if (hosts.empty())
        return;
    const QString world = u"avahi-lobby-%1"_s.arg(::getpid());
    const auto start = [&](int i, const QStringList &args) {
        return avahiNode(*hosts[i], node, args + nodeArgs(47489, u"DnsSd"_s));
    };
    auto root = start(0, {u"--root"_s, u"--world"_s, world});
    auto a = start(2, {u"--world"_s, world});
    // ... a device in n1 hearing announcements only by DNS-SD lists the
    // world, its count updated in place to two of three, and joins it.
    auto chooser = start(1, {u"--pick"_s, world, u"--pick-joined"_s, u"2"_s, u"--lobby-port"_s, u"47499"_s});
    const QString picked = chooser->waitForLine(u"PICKED "_s, 30000);
    QVERIFY2(picked == u"PICKED %1 2 3"_s.arg(world), qPrintable(chooser->output()));
    QVERIFY2(chooser->output().contains(u"browsing worlds through avahi-daemon"_s), qPrintable(chooser->output()));
    QVERIFY2(chooser->output().contains(u" DnsSd "_s), qPrintable(chooser->output()));
    QVERIFY2(!chooser->output().contains(u" Beacon "_s), qPrintable(chooser->output()));
    for (auto *n : {root.get(), a.get(), chooser.get()}) {
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));
    }
    QVERIFY2(root->output().contains(u"announcing world %1 through avahi-daemon"_s.arg(world)),
             qPrintable(root->output()));
}

QTEST_GUILESS_MAIN(tst_DiscoveryNetns)
#include "tst_discovery_netns.moc"
