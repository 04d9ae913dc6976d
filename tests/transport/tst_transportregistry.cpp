// TransportRegistry with the real plugins: the standard ones linked in, and a
// shared one found at run time. They are listed by the names in their
// metadata, created by name, and a wrong name or option is an error that tells
// the user what would have been right.
#include "transporttest.h"

#include <mmpi/transport/listenport.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>

using namespace mmpi;
using namespace mmpi::test;

class tst_TransportRegistry : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void listsTheBuiltPlugins();
    void standardTransportsNeedNoSearchPath();
    void findsASharedPluginInTheSearchPath();
    void searchPathsStartWithTheEnvironment();
    void createsEachTransportByName_data();
    void createsEachTransportByName();
    void unknownNameListsTheAvailableOnes();
    void junkInASearchDirectoryIsSkipped();
    void createIsSafeFromSeveralThreads();
    void badOptionsAreRefusedByName_data();
    void badOptionsAreRefusedByName();
    void goodOptionsAreAccepted_data();
    void goodOptionsAreAccepted();
    void portsForLaterAvoidTheEphemeralRange();

private:
    QByteArray m_savedPath = qgetenv("MMPI_PLUGIN_PATH");
};

void tst_TransportRegistry::cleanup()
{
    qputenv("MMPI_PLUGIN_PATH", m_savedPath);
}

void tst_TransportRegistry::listsTheBuiltPlugins()
{
    const QStringList names = TransportRegistry::availableTransports();
    QVERIFY2(names.contains(QStringLiteral("local")), qPrintable(names.join(u',')));
    QVERIFY2(names.contains(QStringLiteral("tcp")), qPrintable(names.join(u',')));
    QStringList sorted = names;
    sorted.sort();
    QCOMPARE(names, sorted);
    QCOMPARE(names.size(), QSet<QString>(names.begin(), names.end()).size());
}

void tst_TransportRegistry::standardTransportsNeedNoSearchPath()
{
    // Nothing to find in the only directory named, and none beside the test.
    QTemporaryDir empty;
    qputenv("MMPI_PLUGIN_PATH", empty.path().toLocal8Bit());
    const QStringList expected{QStringLiteral("bluetooth"), QStringLiteral("local"), QStringLiteral("sim"),
                               QStringLiteral("tcp")};
    const QStringList names = TransportRegistry::availableTransports();
    for (const QString &name : expected)
        QVERIFY2(names.contains(name), qPrintable(names.join(u',')));
    QVERIFY2(!names.contains(QStringLiteral("shared-test")), qPrintable(names.join(u',')));
    // sim makes its links through the registry too.
    QObject owner;
    for (const QString &name : {QStringLiteral("local"), QStringLiteral("sim"), QStringLiteral("tcp")}) {
        auto created = TransportRegistry::create(name, &owner);
        QVERIFY2(created, why(created).constData());
        QCOMPARE((*created)->name(), name);
    }
}

void tst_TransportRegistry::findsASharedPluginInTheSearchPath()
{
    qputenv("MMPI_PLUGIN_PATH", QByteArrayLiteral(MMPI_SHARED_PLUGIN_DIR));
    QVERIFY2(TransportRegistry::availableTransports().contains(QStringLiteral("shared-test")),
             qPrintable(TransportRegistry::availableTransports().join(u',')));
    QObject owner;
    auto created = TransportRegistry::create(QStringLiteral("shared-test"), &owner);
    QVERIFY2(created, why(created).constData());
    QCOMPARE((*created)->name(), QStringLiteral("shared-test"));
    // It is the plugin's own code that answers.
    auto link = (*created)->connectTo(QStringLiteral("nowhere"));
    QVERIFY(!link);
    QCOMPARE(link.error().code, ErrorCode::BadAddress);
    QVERIFY2(link.error().message.contains(QStringLiteral("shared-test transport cannot reach 'nowhere'")),
             qPrintable(link.error().message));
}

void tst_TransportRegistry::searchPathsStartWithTheEnvironment()
{
    QTemporaryDir first, second;
    qputenv("MMPI_PLUGIN_PATH", (first.path() + u':' + second.path()).toLocal8Bit());
    const QStringList paths = TransportRegistry::searchPaths();
    QVERIFY(paths.size() >= 3);
    QCOMPARE(paths.at(0), QDir::cleanPath(first.path()));
    QCOMPARE(paths.at(1), QDir::cleanPath(second.path()));
    QVERIFY(paths.contains(QDir::cleanPath(QCoreApplication::applicationDirPath()
                                           + QStringLiteral("/../lib/mmpi/plugins"))));
}

void tst_TransportRegistry::createsEachTransportByName_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("local") << QStringLiteral("local");
    QTest::newRow("tcp") << QStringLiteral("tcp");
}

void tst_TransportRegistry::createsEachTransportByName()
{
    QFETCH(QString, name);
    QObject owner;
    auto created = TransportRegistry::create(name, &owner);
    QVERIFY2(created, why(created).constData());
    QCOMPARE((*created)->name(), name);
    QCOMPARE((*created)->parent(), &owner);
    QVERIFY((*created)->supportsDiscovery());
    QVERIFY((*created)->listenAddress().isEmpty());
    // An empty option map is always fine.
    QVERIFY((*created)->configure({}));
}

void tst_TransportRegistry::unknownNameListsTheAvailableOnes()
{
    auto created = TransportRegistry::create(QStringLiteral("carrier-pigeon"));
    QVERIFY(!created);
    const Error &error = created.error();
    QCOMPARE(error.code, ErrorCode::UnknownTransport);
    QVERIFY2(error.message.startsWith(QStringLiteral("unknown transport 'carrier-pigeon'; available: ")),
             qPrintable(error.message));
    QVERIFY2(error.message.contains(QStringLiteral("local, ")) && error.message.contains(QStringLiteral("tcp")),
             qPrintable(error.message));
    // It says where it looked, so a missing plugin can be tracked down.
    QVERIFY2(error.message.contains(QStringLiteral("searched: ")), qPrintable(error.message));
    QVERIFY2(error.message.contains(TransportRegistry::searchPaths().first()), qPrintable(error.message));
}

void tst_TransportRegistry::junkInASearchDirectoryIsSkipped()
{
    // A directory listed first, holding a file that looks like a library
    // but is not one, and one that is not a library at all.
    QTemporaryDir junk;
    QFile fake(junk.path() + QStringLiteral("/libmmpi_transport_fake.so"));
    QVERIFY(fake.open(QIODevice::WriteOnly));
    fake.write("\x7F" "ELF but not really");
    fake.close();
    QFile text(junk.path() + QStringLiteral("/README"));
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.close();
    qputenv("MMPI_PLUGIN_PATH", junk.path().toLocal8Bit() + ':' + MMPI_SHARED_PLUGIN_DIR);

    const QStringList names = TransportRegistry::availableTransports();
    QVERIFY(names.contains(QStringLiteral("local")));
    QVERIFY(names.contains(QStringLiteral("tcp")));
    QVERIFY(names.contains(QStringLiteral("shared-test")));
    auto created = TransportRegistry::create(QStringLiteral("tcp"));
    QVERIFY2(created, why(created).constData());
    delete *created;
}

void tst_TransportRegistry::createIsSafeFromSeveralThreads()
{
    // Each thread scans (or finds the cache), loads and creates on its own.
    std::atomic<int> created = 0;
    QList<QThread *> threads;
    for (int i = 0; i < 8; ++i) {
        threads << QThread::create([&created, i] {
            auto transport = TransportRegistry::create(i % 2 ? QStringLiteral("tcp") : QStringLiteral("local"));
            if (transport) {
                ++created;
                delete *transport;
            }
        });
        threads.last()->start();
    }
    for (QThread *thread : threads) {
        QVERIFY(thread->wait(Timeout));
        delete thread;
    }
    QCOMPARE(created.load(), 8);
}

void tst_TransportRegistry::badOptionsAreRefusedByName_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<QVariantMap>("options");
    QTest::addColumn<QString>("key");
    const auto row = [](const char *name, const QString &transport, const QString &key, const QVariant &value) {
        QTest::newRow(name) << transport << QVariantMap{{key, value}} << key;
    };
    const QString tcp = QStringLiteral("tcp"), local = QStringLiteral("local");
    row("tcp unknown", tcp, QStringLiteral("colour"), QStringLiteral("blue"));
    row("local unknown", local, QStringLiteral("beaconPort"), 47474);
    row("tcp port text", tcp, QStringLiteral("beaconPort"), QStringLiteral("lots"));
    row("tcp port range", tcp, QStringLiteral("beaconPort"), 70000);
    row("tcp port fraction", tcp, QStringLiteral("beaconPort"), 4747.5);
    row("tcp interval zero", tcp, QStringLiteral("beaconInterval"), 0);
    row("tcp host", tcp, QStringLiteral("listenHost"), QStringLiteral("my laptop"));
    row("tcp host type", tcp, QStringLiteral("listenHost"), QVariantList{1, 2});
    row("tcp targets", tcp, QStringLiteral("beaconTargets"), QStringList{QStringLiteral("127.0.0.1"),
                                                                        QStringLiteral("nowhere")});
    row("tcp timeout", tcp, QStringLiteral("connectTimeout"), -5);
    row("local dir type", local, QStringLiteral("discoveryDir"), QStringList{QStringLiteral("/tmp")});
    row("local interval", local, QStringLiteral("discoveryInterval"), QStringLiteral("soon"));
    row("local frame size", local, QStringLiteral("maxFrameSize"), 3);
    row("tcp socket buffer negative", tcp, QStringLiteral("socketBuffer"), -1);
    row("tcp congestion control name", tcp, QStringLiteral("loopbackCongestionControl"), QStringLiteral("cu bic"));
    row("tcp congestion control too long", tcp, QStringLiteral("loopbackCongestionControl"),
        QStringLiteral("a-very-long-algorithm"));
    row("local socket buffer too large", local, QStringLiteral("socketBuffer"), 65 * 1024 * 1024);
}

void tst_TransportRegistry::badOptionsAreRefusedByName()
{
    QFETCH(QString, transport);
    QFETCH(QVariantMap, options);
    QFETCH(QString, key);
    auto created = TransportRegistry::create(transport);
    QVERIFY(created);
    std::unique_ptr<Transport> t(*created);
    auto configured = t->configure(options);
    QVERIFY(!configured);
    QCOMPARE(configured.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(configured.error().message.contains(u'\'' + key + u'\''), qPrintable(configured.error().message));
}

void tst_TransportRegistry::goodOptionsAreAccepted_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<QVariantMap>("options");
    QTest::newRow("tcp all") << QStringLiteral("tcp")
                             << QVariantMap{{QStringLiteral("listenHost"), QStringLiteral("127.0.0.1")},
                                            {QStringLiteral("beaconPort"), 40000},
                                            {QStringLiteral("beaconTargets"), QStringList{QStringLiteral("127.0.0.1"),
                                                                                          QStringLiteral("::1")}},
                                            {QStringLiteral("beaconInterval"), 250.0},
                                            {QStringLiteral("connectTimeout"), QStringLiteral("2000")},
                                            {QStringLiteral("maxFrameSize"), 1 << 20},
                                            {QStringLiteral("socketBuffer"), 0}};
    QTest::newRow("tcp targets as text") << QStringLiteral("tcp")
                                         << QVariantMap{{QStringLiteral("beaconTargets"),
                                                         QStringLiteral("127.0.0.1, 10.255.255.255")}};
    QTest::newRow("local all") << QStringLiteral("local")
                               << QVariantMap{{QStringLiteral("discoveryDir"), QDir::tempPath()},
                                              {QStringLiteral("discoveryInterval"), 100},
                                              {QStringLiteral("maxFrameSize"), 1 << 20},
                                              {QStringLiteral("socketBuffer"), 256 * 1024}};
}

void tst_TransportRegistry::goodOptionsAreAccepted()
{
    QFETCH(QString, transport);
    QFETCH(QVariantMap, options);
    auto t = makeTransport(transport, options);
    QVERIFY(t);
}

// A port held for a listener that starts later is one no outgoing
// connection can be given meanwhile: below the ephemeral range.
void tst_TransportRegistry::portsForLaterAvoidTheEphemeralRange()
{
    QFile range(QStringLiteral("/proc/sys/net/ipv4/ip_local_port_range"));
    if (!range.open(QIODevice::ReadOnly))
        QSKIP("the system does not say which ports it gives outgoing connections");
    const int low = range.readAll().simplified().split(' ').value(0).toInt();
    if (low <= 10001)
        QSKIP("the ephemeral range starts too low to choose below it");
    QSet<quint16> ports;
    for (int i = 0; i < 20; ++i) {
        const auto held = listenForLater(QHostAddress::LocalHost);
        QVERIFY2(held->isListening(), qPrintable(held->errorString()));
        QVERIFY2(held->serverPort() >= 10000 && held->serverPort() < low,
                 qPrintable(QStringLiteral("port %1, ephemeral from %2").arg(held->serverPort()).arg(low)));
        ports.insert(held->serverPort());
    }
    QVERIFY(ports.size() > 1); // chosen at random, so concurrent users rarely meet
}

QTEST_GUILESS_MAIN(tst_TransportRegistry)
#include "tst_transportregistry.moc"
