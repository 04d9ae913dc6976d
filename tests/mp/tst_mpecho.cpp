// tst_mpecho: runs the real mmpi-mp-echo as a process against raw edu.rit.mp
// peers written here (standing in for a PJ program), in both listen and connect
// mode, and checks the exact bytes it sends back and the lines it prints.
#include "mpvectors.h"
#include "processrun.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <memory>

using namespace mpvectors;
using namespace mmpi::test;

namespace {

const QString echoPath = QStringLiteral(MMPI_MP_ECHO_PATH);

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 10000)
{
    return QTest::qWaitFor(condition, timeoutMs);
}

QByteArray readRaw(QTcpSocket *socket, qint64 n)
{
    if (!waitFor([&] { return socket->bytesAvailable() >= n; }))
        return "timeout, have " + socket->readAll().toHex(' ');
    return socket->read(n);
}

// The echo process with its stdout collected as it comes.
struct EchoProcess
{
    QProcess process;
    QString out;

    explicit EchoProcess(const QStringList &args)
    {
        process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QObject::connect(&process, &QProcess::readyReadStandardOutput, &process,
                         [this] { out += QString::fromUtf8(process.readAllStandardOutput()); });
        process.start(echoPath, args);
    }
    ~EchoProcess()
    {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
    bool waitForLine(const QString &part) { return waitFor([&] { return out.contains(part); }); }
};

} // namespace

class TestMpEcho : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void help()
    {
        const ProcessRun run = runProcess(echoPath, {QStringLiteral("--help")}, {.timeoutMs = 10000});
        QCOMPARE(run.exitCode, 0);
        const QString &text = run.out;
        QVERIFY(text.contains(QStringLiteral("--listen")));
        QVERIFY(text.contains(QStringLiteral("--connect")));
        QVERIFY(text.contains(QStringLiteral("--id")));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("neither") << QStringList{QStringLiteral("--id"), QStringLiteral("1")};
        QTest::newRow("both") << QStringList{QStringLiteral("--listen"), QStringLiteral("0"), QStringLiteral("--connect"),
                                             QStringLiteral("127.0.0.1:1")};
        QTest::newRow("bad id") << QStringList{QStringLiteral("--listen"), QStringLiteral("0"), QStringLiteral("--id"),
                                               QStringLiteral("x")};
        QTest::newRow("bad target") << QStringList{QStringLiteral("--connect"), QStringLiteral("nowhere")};
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        const ProcessRun run = runProcess(echoPath, args, {.timeoutMs = 10000});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains(QLatin1String("--help")));
    }

    void listenModeEchoesEveryMessage()
    {
        EchoProcess echo({QStringLiteral("--listen"), QStringLiteral("0"), QStringLiteral("--bind"),
                          QStringLiteral("127.0.0.1"), QStringLiteral("--id"), QStringLiteral("5")});
        QVERIFY2(echo.waitForLine(QStringLiteral("\n")), qPrintable(echo.out));
        const auto match = QRegularExpression(QStringLiteral("listening: 127\\.0\\.0\\.1:(\\d+) id 5")).match(echo.out);
        QVERIFY2(match.hasMatch(), qPrintable(echo.out));
        const quint16 port = quint16(match.captured(1).toUInt());

        // A PJ program with channel group ID 3 connects.
        QTcpSocket peer;
        peer.connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(peer.waitForConnected(5000));
        peer.write(hex("00000003"));
        QCOMPARE(readRaw(&peer, 4), hex("00000005"));
        QVERIFY(echo.waitForLine(QStringLiteral("open: far id 3")));

        // Same tag and type back; 12 goes back as PJ sends unsigned bytes (10).
        peer.write(intMsg());
        QCOMPARE(readRaw(&peer, intMsg().size()), intMsg());
        peer.write(doubleMsg() + charMsg() + unsigned16Msg());
        const QByteArray three = doubleMsg() + charMsg() + unsigned16Msg();
        QCOMPARE(readRaw(&peer, three.size()).toHex(' '), three.toHex(' '));
        peer.write(code12Msg());
        QCOMPARE(readRaw(&peer, code12Msg().size()), hex("01cbf854 00000002 0a 00000002 ff 80"));
        // An object is reported, not echoed; the next message still is.
        peer.write(objectMsg() + boolMsg());
        QCOMPARE(readRaw(&peer, boolMsg().size()), boolMsg());
        QVERIFY(echo.waitForLine(QStringLiteral("message: far id 3 tag 7 Boolean (1) N=3 [1, 0, 1] -> echoed as Boolean (1)")));
        QVERIFY(echo.out.contains(QStringLiteral("message: far id 3 tag 7 Int (4) N=2 [1, -1] -> echoed as Int (4)")));
        QVERIFY(echo.out.contains(QStringLiteral("tag -2 Double (8) N=2 [1, -0.5]")));
        QVERIFY(echo.out.contains(QStringLiteral("tag 2 UnsignedByte (12) N=2 [255, 128] -> echoed as SignedByte (10)")));
        QVERIFY(echo.out.contains(QStringLiteral("tag 4 Object (9) N=6 (6 bytes of Java serialization) -> not echoed")));

        // The peer leaves without a goodbye; the echo keeps listening for others.
        peer.disconnectFromHost();
        QVERIFY(echo.waitForLine(QStringLiteral("closed: far id 3")));
        QTcpSocket second;
        second.connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(second.waitForConnected(5000));
        second.write(hex("00000004") + emptyIntMsg());
        QCOMPARE(readRaw(&second, 4 + emptyIntMsg().size()), hex("00000005") + emptyIntMsg());

        // Garbage is reported and ends only that channel.
        second.write(hex("deadbeef"));
        QVERIFY(echo.waitForLine(QStringLiteral("BadMagic")));
        QVERIFY(waitFor([&] { return second.state() == QAbstractSocket::UnconnectedState; }));
        QCOMPARE(echo.process.state(), QProcess::Running);
    }

    void connectModeEchoesAndExitsWhenThePeerCloses()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        EchoProcess echo({QStringLiteral("--connect"), QStringLiteral("127.0.0.1:%1").arg(server.serverPort()),
                          QStringLiteral("--id"), QStringLiteral("9")});
        QVERIFY(waitFor([&] { return server.hasPendingConnections(); }));
        QTcpSocket *peer = server.nextPendingConnection();
        QCOMPARE(readRaw(peer, 4), hex("00000009"));
        // Our ID in two pieces: the echo must accept a split ID.
        peer->write(hex("0000"));
        peer->flush();
        QTest::qWait(30);
        peer->write(hex("0001"));
        peer->write(longMsg() + code2Msg() + code13Msg());
        QCOMPARE(readRaw(peer, longMsg().size()), longMsg());
        QCOMPARE(readRaw(peer, code2Msg().size()), hex("01cbf854 00000001 01 00000002 ff 01"));
        QCOMPARE(readRaw(peer, code13Msg().size()), hex("01cbf854 00000003 0b 00000001 fffe"));
        peer->disconnectFromHost();
        QVERIFY(echo.process.waitForFinished(10000));
        QCOMPARE(echo.process.exitCode(), 0);
        echo.out += QString::fromUtf8(echo.process.readAllStandardOutput());
        QVERIFY2(echo.out.contains(QStringLiteral("open: far id 1")), qPrintable(echo.out));
        QVERIFY(echo.out.contains(QStringLiteral("Long (5) N=1 [72623859790382856] -> echoed as Long (5)")));
        QVERIFY(echo.out.contains(QStringLiteral("closed: far id 1")));
    }

    void connectModeFailsOnASilentPeer()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        EchoProcess echo({QStringLiteral("--connect"), QStringLiteral("127.0.0.1:%1").arg(server.serverPort()),
                          QStringLiteral("--id-timeout"), QStringLiteral("300")});
        QVERIFY(echo.process.waitForFinished(10000));
        QCOMPARE(echo.process.exitCode(), 1);
        echo.out += QString::fromUtf8(echo.process.readAllStandardOutput());
        QVERIFY2(echo.out.contains(QStringLiteral("ProtocolViolation")), qPrintable(echo.out));
        QVERIFY(echo.out.contains(QStringLiteral("within 300 ms")));
    }
};

QTEST_GUILESS_MAIN(TestMpEcho)
#include "tst_mpecho.moc"
