// tst_capture_netns: what a sealed world puts on the wire. Two network
// namespaces joined by a veth pair the test makes (root and `ip` needed,
// else skipped with the reason; 10.47.0.1-2/24, only inside them, removed
// whatever happens) hold one discoverynode each: a 2-node tcp world keyed by
// a join code. Rank 1 sends rank 0 a whiteboard stroke that carries a marker
// made for this run, while packetcapture records every frame on the veth.
// Rank 0 gets the marker; the capture, which does hold the handshake's
// clear fields (the world's name), holds no copy of it.
#include "netns.h"

#include <mmpi/world/joincode.h>

#include <QDataStream>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <memory>

namespace {

using namespace mmpi::test;
using namespace Qt::StringLiterals;

const QString node = QStringLiteral(DISCOVERY_NODE_PATH);
const QString capturer = QStringLiteral(PACKET_CAPTURE_PATH);
constexpr quint16 BeaconPort = 47491;

// Namespaces <base>-a and <base>-b, each with its end of one veth pair as eth0.
class VethPair
{
public:
    static std::unique_ptr<VethPair> create(QString *error)
    {
        std::unique_ptr<VethPair> pair(new VethPair);
        const QString a = pair->ns(0), b = pair->ns(1);
        QList<QStringList> ip = {{u"netns"_s, u"add"_s, a},
                                 {u"netns"_s, u"add"_s, b},
                                 {u"-n"_s, a, u"link"_s, u"add"_s, u"eth0"_s, u"type"_s, u"veth"_s, u"peer"_s,
                                  u"name"_s, u"eth0"_s, u"netns"_s, b}};
        for (int i = 0; i < 2; ++i)
            ip += {{u"-n"_s, pair->ns(i), u"addr"_s, u"add"_s, u"10.47.0.%1/24"_s.arg(i + 1), u"dev"_s, u"eth0"_s},
                   {u"-n"_s, pair->ns(i), u"link"_s, u"set"_s, u"eth0"_s, u"up"_s},
                   {u"-n"_s, pair->ns(i), u"link"_s, u"set"_s, u"lo"_s, u"up"_s}};
        for (const QStringList &step : ip)
            if (!runCommand(u"ip"_s, step, error))
                return nullptr; // the destructor removes what was made
        return pair;
    }

    ~VethPair()
    {
        for (int i = 0; i < 2; ++i)
            runCommand(u"ip"_s, {u"netns"_s, u"del"_s, ns(i)}, nullptr);
    }

    QString ns(int i) const { return u"mmpic%1-%2"_s.arg(::getpid()).arg(i == 0 ? u'a' : u'b'); }

private:
    VethPair() = default;
};

// As a whiteboard sends a stroke: colour, width, points, then the author's
// label, which is the marker.
QByteArray stroke(const QByteArray &marker)
{
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    out << quint32(0xff2060c0) << quint16(3) << quint16(64);
    for (int i = 0; i < 64; ++i)
        out << qint16(10 + 3 * i) << qint16(200 - i);
    out.writeRawData(marker.constData(), int(marker.size()));
    return bytes;
}

// The frames of packetcapture's file, or nullopt if it is malformed.
std::optional<QList<QByteArray>> readCapture(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray data = file.readAll();
    QList<QByteArray> frames;
    for (qsizetype at = 0; at < data.size();) {
        if (data.size() - at < 4)
            return std::nullopt;
        const quint32 length = qFromBigEndian<quint32>(data.constData() + at);
        if (data.size() - at - 4 < qsizetype(length))
            return std::nullopt;
        frames << data.mid(at + 4, length);
        at += 4 + qsizetype(length);
    }
    return frames;
}

QByteArray utf16BigEndian(const QString &text)
{
    QByteArray bytes;
    for (const QChar c : text)
        bytes.append(char(c.unicode() >> 8)).append(char(c.unicode() & 0xff));
    return bytes;
}

QStringList nodeArgs()
{
    return {u"--size"_s, u"2"_s, u"--interfaces"_s, u"eth0"_s, u"--beacon-port"_s, QString::number(BeaconPort),
            u"--beacon-timeout"_s, u"1500"_s, u"--timeout"_s, u"30000"_s};
}

} // namespace

class tst_CaptureNetns : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup() { m_pair.reset(); }
    void strokeCrossesTheWireSealed();

private:
    std::unique_ptr<VethPair> m_pair;
};

void tst_CaptureNetns::init()
{
    if (const QString why = whyNoNamespaces({u"ip"_s}); !why.isEmpty())
        QSKIP(qPrintable(why));
    QString error;
    m_pair = VethPair::create(&error);
    QVERIFY2(m_pair, qPrintable(error));
}

void tst_CaptureNetns::strokeCrossesTheWireSealed()
{
    // Given a capture of the veth, from before the world forms
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(u"veth.capture"_s);
    NamespacedProcess capture(m_pair->ns(0), capturer, {u"eth0"_s, file, u"120"_s});
    QVERIFY2(!capture.waitForLine(u"READY"_s, 10000).isEmpty(), qPrintable(capture.output()));
    const QByteArray marker = "whiteboard-marker-"
        + QByteArray::number(QRandomGenerator::global()->generate64(), 16).rightJustified(16, '0');
    const QByteArray payload = stroke(marker);

    // When rank 1 of a world keyed by a join code sends rank 0 a stroke with the marker
    NamespacedProcess root(m_pair->ns(0), node, QStringList{u"--root"_s, u"--make-code"_s, u"--expect-message"_s}
                                                    + nodeArgs());
    const QString code = root.waitForLine(u"CODE "_s, 10000).mid(5);
    QVERIFY2(!code.isEmpty(), qPrintable(root.output()));
    NamespacedProcess member(m_pair->ns(1), node, nodeArgs() + QStringList{u"--join-code"_s, code, u"--send"_s,
                                                                           QString::fromLatin1(payload.toHex())});
    for (NamespacedProcess *n : {&root, &member})
        QVERIFY2(!n->waitForLine(u"FORMED "_s, 30000).isEmpty(), qPrintable(n->output()));

    // Then rank 0 receives it whole
    QCOMPARE(root.waitForLine(u"RECEIVED "_s, 30000), u"RECEIVED 1 "_s + QString::fromLatin1(payload.toHex()));
    for (NamespacedProcess *n : {&root, &member})
        QVERIFY2(n->finishedWell(15000), qPrintable(n->output()));

    // And the veth carried the world (the Challenge's world name is in the
    // clear) but not the marker, which only sealed records held
    capture.terminate();
    QVERIFY2(capture.finishedWell(10000), qPrintable(capture.output()));
    QVERIFY2(!capture.waitForLine(u"CAPTURED "_s, 1000).isEmpty(), qPrintable(capture.output()));
    const auto frames = readCapture(file);
    QVERIFY2(frames, "the capture file is malformed");
    QVERIFY2(!frames->isEmpty(), qPrintable(capture.output()));
    const QByteArray everything = frames->join();
    QVERIFY2(everything.contains(utf16BigEndian(u"netns"_s)), "the capture holds none of the world's traffic");
    for (const QByteArray &frame : *frames)
        QVERIFY2(!frame.contains(marker), frame.toHex().constData());
    QVERIFY(!everything.contains(marker));
    qInfo().noquote() << capture.waitForLine(u"CAPTURED "_s, 0);
}

QTEST_GUILESS_MAIN(tst_CaptureNetns)
#include "tst_capture_netns.moc"
