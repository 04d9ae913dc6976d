// tst_mpecho: runs the real mmpi-mp-echo as a process against raw edu.rit.mp
// peers written here (standing in for a PJ program), in both listen and connect
// mode, and checks the exact bytes it sends back (a Java object stream too),
// the lines it prints, and what a peer that does not read its echoes costs it.
#include "mpvectors.h"
#include "processrun.h"

#include <QFile>
#include <QEventLoop>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>

#include <cstring>
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

// The echo process with its stdout and stderr (its log) collected as they come.
struct EchoProcess
{
    QProcess process;
    QString out;
    QString err;

    explicit EchoProcess(const QStringList &args)
    {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("mmpi.tools.info=true"));
#if defined(__SANITIZE_ADDRESS__)
        // AddressSanitizer keeps freed memory in a quarantine (256 MiB), which
        // the resident-memory check would take for the echo's own.
        QStringList asan = environment.value(QStringLiteral("ASAN_OPTIONS")).split(QLatin1Char(':'), Qt::SkipEmptyParts);
        environment.insert(QStringLiteral("ASAN_OPTIONS"), (asan << QStringLiteral("quarantine_size_mb=0")).join(QLatin1Char(':')));
#endif
        process.setProcessEnvironment(environment);
        QObject::connect(&process, &QProcess::readyReadStandardOutput, &process,
                         [this] { out += QString::fromUtf8(process.readAllStandardOutput()); });
        QObject::connect(&process, &QProcess::readyReadStandardError, &process,
                         [this] { err += QString::fromUtf8(process.readAllStandardError()); });
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
    // The port of an echo started with --listen 0 --bind 127.0.0.1, 0 if it never said.
    quint16 listeningPort()
    {
        if (!waitForLine(QStringLiteral("\n")))
            return 0;
        const auto match = QRegularExpression(QStringLiteral("listening: 127\\.0\\.0\\.1:(\\d+) id")).match(out);
        return match.hasMatch() ? quint16(match.captured(1).toUInt()) : 0;
    }
    // VmRSS (resident now) or VmHWM (the most it was resident) in KiB, from
    // Linux's /proc; -1 if it cannot be read.
    qint64 memoryKiB(QByteArrayView field) const
    {
        QFile status(QStringLiteral("/proc/%1/status").arg(process.processId()));
        if (!status.open(QIODevice::ReadOnly))
            return -1;
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (line.startsWith(field))
                return line.mid(field.size()).simplified().split(' ').first().toLongLong();
        }
        return -1;
    }
};

// A raw peer that dials the echo and completes the ID exchange.
std::unique_ptr<QTcpSocket> dialEcho(quint16 port, const char *idHex)
{
    auto socket = std::make_unique<QTcpSocket>();
    socket->connectToHost(QHostAddress::LocalHost, port);
    if (!socket->waitForConnected(5000))
        return nullptr;
    socket->write(hex(idHex));
    return readRaw(socket.get(), 4) == hex("00000005") ? std::move(socket) : nullptr;
}

// A peer that offers `total` messages of 256 KiB as fast as TCP takes them
// and reads nothing back until startReading(); from then on it checks each
// echo against what it sent, in order, without keeping either.
class StreamingPeer
{
public:
    static constexpr qint32 MessageBytes = 256 * 1024;

    StreamingPeer(std::unique_ptr<QTcpSocket> socket, int total) : m_socket(std::move(socket)), m_total(total)
    {
        // Unread echoes then stay in the kernel's buffers and hold the echo's sends.
        m_socket->setReadBufferSize(64 * 1024);
        QObject::connect(m_socket.get(), &QTcpSocket::bytesWritten, m_socket.get(), [this] { offer(); });
        QObject::connect(m_socket.get(), &QTcpSocket::readyRead, m_socket.get(), [this] {
            if (m_reading)
                check();
        });
        offer();
    }
    void startReading()
    {
        m_reading = true;
        m_socket->setReadBufferSize(1024 * 1024);
        check();
    }
    // Run an event loop until every echo is in or one was wrong: unlike
    // QTest::qWaitFor, which sleeps 10 ms between rounds, it reads as fast as
    // the echo writes.
    bool waitUntilDone(int timeoutMs)
    {
        QEventLoop loop;
        QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
        m_wake = [&loop] { loop.quit(); };
        if (!done())
            loop.exec();
        m_wake = nullptr;
        return done();
    }
    int offered() const { return m_offered; }
    int echoed() const { return m_echoed; }
    const QString &failure() const { return m_failure; }
    bool done() const { return m_echoed == m_total || !m_failure.isEmpty(); }

    // Message i: tag i, signed bytes (code 10, which the echo sends back as is), all i's low byte.
    static QByteArray message(int index)
    {
        QByteArray bytes = hex("01cbf854 00000000 0a 00000000") + QByteArray(MessageBytes, char(index));
        qToBigEndian(qint32(index), bytes.data() + 4);
        qToBigEndian(MessageBytes, bytes.data() + 9);
        return bytes;
    }

private:
    void offer()
    {
        while (m_offered < m_total && m_socket->bytesToWrite() < MessageBytes)
            m_socket->write(message(m_offered++));
    }
    void check()
    {
        while (m_socket->bytesAvailable() > 0 && m_failure.isEmpty()) {
            if (m_at == m_expected.size()) {
                if (m_echoed == m_total) {
                    m_failure = QStringLiteral("more bytes after the last echo");
                    return;
                }
                m_expected = message(m_echoed);
                m_at = 0;
            }
            const QByteArray chunk = m_socket->read(m_expected.size() - m_at);
            if (std::memcmp(m_expected.constData() + m_at, chunk.constData(), size_t(chunk.size())) != 0)
                m_failure = QStringLiteral("echo %1 differs from message %1 within bytes %2..%3")
                                .arg(m_echoed).arg(m_at).arg(m_at + chunk.size());
            m_at += chunk.size();
            if (m_at == m_expected.size())
                ++m_echoed;
        }
        if (done() && m_wake)
            m_wake();
    }

    std::unique_ptr<QTcpSocket> m_socket;
    int m_total;
    int m_offered = 0;
    int m_echoed = 0;
    bool m_reading = false;
    QByteArray m_expected;
    qsizetype m_at = 0;
    QString m_failure;
    std::function<void()> m_wake;
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
        const quint16 port = echo.listeningPort();
        QVERIFY2(port && echo.out.contains(QStringLiteral(" id 5")), qPrintable(echo.out));

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
        // An object goes back as it came; the next message too.
        peer.write(objectMsg() + boolMsg());
        QCOMPARE(readRaw(&peer, objectMsg().size() + boolMsg().size()), objectMsg() + boolMsg());
        QVERIFY(echo.waitForLine(QStringLiteral("message: far id 3 tag 7 Boolean (1) N=3 [1, 0, 1] -> echoed as Boolean (1)")));
        QVERIFY(echo.out.contains(QStringLiteral("message: far id 3 tag 7 Int (4) N=2 [1, -1] -> echoed as Int (4)")));
        QVERIFY(echo.out.contains(QStringLiteral("tag -2 Double (8) N=2 [1, -0.5]")));
        QVERIFY(echo.out.contains(QStringLiteral("tag 2 UnsignedByte (12) N=2 [255, 128] -> echoed as SignedByte (10)")));
        QVERIFY(echo.out.contains(QStringLiteral("tag 4 Object (9) N=6 (6 bytes of Java serialization) -> echoed as Object (9)")));

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

    void javaObjectStreamComesBackByteForByte()
    {
        EchoProcess echo({QStringLiteral("--listen"), QStringLiteral("0"), QStringLiteral("--bind"),
                          QStringLiteral("127.0.0.1"), QStringLiteral("--id"), QStringLiteral("5")});
        const quint16 port = echo.listeningPort();
        QVERIFY2(port, qPrintable(echo.out));
        auto peer = dialEcho(port, "00000003");
        QVERIFY(peer);
        const QByteArray object = javaObjectMsg();
        QCOMPARE(object.size(), 13 + 205);
        // Split inside the stream, right before the magic number it carries.
        const qsizetype cut = object.indexOf(hex("01cbf854"), 13);
        QVERIFY(cut > 13);
        peer->write(object.first(cut));
        peer->flush();
        QTest::qWait(20);
        peer->write(object.sliced(cut) + intMsg());
        QCOMPARE(readRaw(peer.get(), object.size() + intMsg().size()).toHex(' '), (object + intMsg()).toHex(' '));
        QVERIFY(echo.waitForLine(QStringLiteral("tag 7 Int (4)")));
        QVERIFY2(echo.out.contains(QStringLiteral("tag 11 Object (9) N=205 (205 bytes of Java serialization) -> echoed as Object (9)")),
                 qPrintable(echo.out));
    }

    // Without flow control the echo holds every echo a peer leaves unread (with
    // --high-water-mark 4000000000: 529 MiB resident once 512 MiB are sent);
    // with it, about the mark, its small queue and one message (+5 to 10 MiB).
    void aPeerThatDoesNotReadCostsAtMostTheHighWaterMark()
    {
        const int total = 512 * 1024 * 1024 / StreamingPeer::MessageBytes;
        EchoProcess echo({QStringLiteral("--listen"), QStringLiteral("0"), QStringLiteral("--bind"),
                          QStringLiteral("127.0.0.1"), QStringLiteral("--id"), QStringLiteral("5")});
        const quint16 port = echo.listeningPort();
        QVERIFY2(port, qPrintable(echo.out));
        const qint64 startKiB = echo.memoryKiB("VmRSS:");
        QVERIFY2(startKiB > 0, "no /proc/<pid>/status");
        auto slowSocket = dialEcho(port, "00000003");
        QVERIFY(slowSocket);
        const quint16 slowPort = slowSocket->localPort();
        StreamingPeer slow(std::move(slowSocket), total);
        // Until the echo stops reading it, or (an echo without flow control)
        // has taken everything in.
        const QString held = QStringLiteral("far id 3 (127.0.0.1:%1) leaves its echoes unread").arg(slowPort);
        QVERIFY(waitFor([&] { return echo.err.contains(held) || slow.offered() == total; }, 30000));
        qint64 heldKiB = echo.memoryKiB("VmRSS:");
        QVERIFY2(heldKiB - startKiB < 64 * 1024,
                 qPrintable(QStringLiteral("%1 KiB at start, %2 KiB with %3 of %4 messages offered")
                                .arg(startKiB).arg(heldKiB).arg(slow.offered()).arg(total)));
        QVERIFY2(echo.err.contains(held), qPrintable(echo.err));

        // Meanwhile another peer is served as ever.
        auto good = dialEcho(port, "00000004");
        QVERIFY(good);
        good->write(intMsg() + javaObjectMsg());
        QCOMPARE(readRaw(good.get(), intMsg().size() + javaObjectMsg().size()), intMsg() + javaObjectMsg());
        QVERIFY(slow.offered() < total); // held by TCP, not read into the echo
        heldKiB = qMax(heldKiB, echo.memoryKiB("VmRSS:"));

        slow.startReading();
        QVERIFY2(slow.waitUntilDone(60000),
                 qPrintable(QStringLiteral("%1 of %2 echoes").arg(slow.echoed()).arg(total)));
        QVERIFY2(slow.failure().isEmpty(), qPrintable(slow.failure()));
        QCOMPARE(slow.echoed(), total);
        QVERIFY(waitFor([&] { return echo.err.contains(QStringLiteral("reads its echoes again")); }));
        // Linux counts resident pages per thread in batches: VmHWM can lag a sample.
        const qint64 peakKiB = qMax(heldKiB, echo.memoryKiB("VmHWM:"));
        const QString memory = QStringLiteral("echo resident: %1 KiB at start, %2 KiB while held, peak %3 KiB (+%4 KiB)")
                                   .arg(startKiB).arg(heldKiB).arg(peakKiB).arg(peakKiB - startKiB);
        qInfo().noquote() << memory << "pauses" << echo.err.count(QStringLiteral("leaves its echoes unread"));
        QVERIFY2(peakKiB - startKiB < 64 * 1024, qPrintable(memory));
    }

    void countEndsTheRunOnceTheLastEchoIsSent()
    {
        EchoProcess echo({QStringLiteral("--listen"), QStringLiteral("0"), QStringLiteral("--bind"),
                          QStringLiteral("127.0.0.1"), QStringLiteral("--id"), QStringLiteral("5"),
                          QStringLiteral("--count"), QStringLiteral("2")});
        const quint16 port = echo.listeningPort();
        QVERIFY2(port, qPrintable(echo.out));
        auto peer = dialEcho(port, "00000003");
        QVERIFY(peer);
        peer->write(intMsg() + javaObjectMsg() + boolMsg());
        QCOMPARE(readRaw(peer.get(), intMsg().size() + javaObjectMsg().size()), intMsg() + javaObjectMsg());
        QVERIFY(waitFor([&] { return echo.process.state() == QProcess::NotRunning; }));
        QCOMPARE(echo.process.exitCode(), 0);
        QVERIFY(waitFor([&] { return peer->state() == QAbstractSocket::UnconnectedState; }));
        QCOMPARE(peer->bytesAvailable(), 0); // the third message was not echoed
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
