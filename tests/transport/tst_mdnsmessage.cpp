// DNS-SD's messages as the tcp transport's multicast DNS responder reads and
// writes them (DnsMessage, DnsSdService, built from the plugin's sources):
// known bytes read as RFC 1035 says, what encode() writes reads back, and
// hostile messages (compression loops, oversized names and TXT records,
// counts that cannot fit, cut-off records, answers for another world or
// with a lying TXT) are refused or ignored with their reason, never read
// past their end.
#include "dnsmessage.h"
#include "dnssdservice.h"

#include <QTest>

using namespace mmpi;

namespace {

template<typename T>
QByteArray whyNot(const mmpi::Result<T> &result)
{
    return result ? QByteArray() : result.error().toString().toUtf8();
}

// A header: id 0, `flags`, the four counts.
QByteArray header(quint16 flags, int qd, int an, int ns = 0, int ar = 0)
{
    QByteArray out;
    for (int v : {0, int(flags), qd, an, ns, ar})
        out.append(char(v >> 8)).append(char(v & 0xFF));
    return out;
}

const QByteArray serviceName = QByteArray("\x05_mmpi\x04_tcp\x05local\x00", 18);

DnsSdService sampleService()
{
    DnsSdService s;
    s.worldHash = DnsSdService::hashOf(QStringLiteral("blue"));
    s.nodeId = QStringLiteral("5f0c2a3e-1111-2222-3333-444455556666");
    s.sizeWanted = 3;
    s.hosts = {QHostAddress(QStringLiteral("10.48.0.2")), QHostAddress(QStringLiteral("fd00::2"))};
    s.port = 40123;
    return s;
}

DnsMessage responseOf(const DnsSdService &service, quint32 ttl = DnsSdService::Ttl)
{
    DnsMessage m;
    m.flags = DnsMessage::ResponseFlags;
    m.answers = *service.records(ttl);
    return m;
}

void expectRefused(const QByteArray &bytes, const QString &reasonPart)
{
    const auto parsed = DnsMessage::parse(bytes);
    QVERIFY2(!parsed, "a hostile message was accepted");
    QCOMPARE(parsed.error().code, ErrorCode::BadDnsMessage);
    QVERIFY2(parsed.error().message.contains(reasonPart), qPrintable(parsed.error().message));
}

} // namespace

class tst_MdnsMessage : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void queryHasItsKnownBytes();
    void compressedResponseReads();
    void recordsRoundTrip();
    void hostileMessagesAreRefused_data();
    void hostileMessagesAreRefused();
    void longNameThroughPointersIsRefused();
    void txtRoundTrip();
    void badTxtIsRefused_data();
    void badTxtIsRefused();
    void otherWorldsAndLiesAreIgnored();
    void addressesFromSender();
    void worldAnnouncementRoundTrip();
    void badWorldTxtIsRefused_data();
    void badWorldTxtIsRefused();
};

void tst_MdnsMessage::queryHasItsKnownBytes()
{
    // Given the root's question for _mmpi._tcp.local PTR ...
    DnsMessage query;
    query.questions << DnsMessage::Question{DnsSdService::serviceName(), DnsMessage::Ptr, DnsMessage::ClassIn};
    const auto bytes = query.encode();
    QVERIFY2(bytes, whyNot(bytes).constData());
    // ... then the bytes are RFC 1035's: header, labels, type 12, class 1.
    QCOMPARE(bytes->toHex(), (header(0, 1, 0) + serviceName + QByteArray("\x00\x0c\x00\x01", 4)).toHex());
    const auto back = DnsMessage::parse(*bytes);
    QVERIFY2(back, whyNot(back).constData());
    QCOMPARE(*back, query);
}

void tst_MdnsMessage::compressedResponseReads()
{
    // A response as another responder compresses it: the PTR's name at byte
    // 12, its target "n1" + a pointer to it (0xC00C), and an A record of
    // host "h" + pointer to "local" (byte 12 + 11).
    QByteArray m = header(0x8400, 0, 2);
    m += serviceName;
    m += QByteArray("\x00\x0c\x00\x01\x00\x00\x00\x78\x00\x05", 10);
    m += QByteArray("\x02n1\xc0\x0c", 5);
    m += QByteArray("\x01h\xc0\x17", 4);
    m += QByteArray("\x00\x01\x80\x01\x00\x00\x00\x78\x00\x04\x0a\x00\x00\x07", 14);
    const auto parsed = DnsMessage::parse(m);
    QVERIFY2(parsed, whyNot(parsed).constData());
    QVERIFY(parsed->isResponse());
    QCOMPARE(parsed->answers.size(), 2);
    const DnsMessage::Record &ptr = parsed->answers[0];
    QVERIFY(DnsMessage::sameName(ptr.name, DnsSdService::serviceName()));
    QCOMPARE(ptr.ttl, 120u);
    QCOMPARE(DnsMessage::nameText(ptr.target), QStringLiteral("n1._mmpi._tcp.local"));
    const DnsMessage::Record &a = parsed->answers[1];
    QCOMPARE(DnsMessage::nameText(a.name), QStringLiteral("h.local"));
    QCOMPARE(a.recordClass, quint16(0x8001)); // cache flush
    QCOMPARE(a.address, QHostAddress(QStringLiteral("10.0.0.7")));
    // Names compare without regard to ASCII case.
    QVERIFY(DnsMessage::sameName({"_MMPI", "_Tcp", "LOCAL"}, DnsSdService::serviceName()));
    QVERIFY(!DnsMessage::sameName({"_mmpi", "_tcp"}, DnsSdService::serviceName()));
}

void tst_MdnsMessage::recordsRoundTrip()
{
    const DnsMessage m = responseOf(sampleService());
    QCOMPARE(m.answers.size(), 5); // PTR, SRV, TXT, A, AAAA
    const auto bytes = m.encode();
    QVERIFY2(bytes, whyNot(bytes).constData());
    const auto back = DnsMessage::parse(*bytes);
    QVERIFY2(back, whyNot(back).constData());
    QCOMPARE(*back, m);
    QCOMPARE(back->answers[1].port, quint16(40123));
    QCOMPARE(DnsMessage::nameText(back->answers[1].target), QStringLiteral("mmpi-5f0c2a3e1111.local"));
}

void tst_MdnsMessage::hostileMessagesAreRefused_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("reason");
    const QByteArray ptrFixed("\x00\x0c\x00\x01\x00\x00\x00\x78", 8);
    QTest::newRow("short header") << QByteArray(11, '\0') << "shorter than its 12-byte header";
    QTest::newRow("too large") << (header(0, 0, 0) + QByteArray(DnsMessage::MaxMessageSize, '\0'))
                               << "multicast DNS allows 9000";
    QTest::newRow("opcode") << header(0x2800, 0, 0) << "opcode 5";
    QTest::newRow("rcode") << header(0x8403, 0, 0) << "response code 3";
    QTest::newRow("counts do not fit") << header(0, 65535, 0) << "questions and records";
    QTest::newRow("records do not fit") << (header(0x8400, 0, 3) + QByteArray(30, '\0'))
                                        << "cannot fit in the 30 bytes";
    QTest::newRow("too many entries") << (header(0x8400, 0, 200, 0, 100) + QByteArray(3300, '\0'))
                                      << "300 questions and records (256 allowed)";
    // A pointer to itself (byte 12), and one forward: loops cannot be followed.
    QTest::newRow("pointer to itself") << (header(0, 1, 0) + QByteArray("\xc0\x0c\x00\x01\x00\x01", 6))
                                       << "leads forward to byte 12";
    QTest::newRow("pointer forward") << (header(0, 1, 0) + QByteArray("\xc0\x10\x00\x01\x00\x01\x00", 7))
                                     << "leads forward";
    QTest::newRow("pointer cut off") << (header(0, 1, 0) + QByteArray("\x01" "a\x00\x00\x01\xc0", 6))
                                     << "cut off";
    QTest::newRow("label type 0x40") << (header(0, 1, 0) + QByteArray("\x41x\x00\x00\x01", 5)) << "label type 0x40";
    QTest::newRow("label past end") << (header(0, 1, 0) + QByteArray("\x3f" "abc\x00", 5)) << "runs past the end";
    QTest::newRow("no root label") << (header(0, 1, 0) + QByteArray("\x01" "a\x01" "b\x01" "c", 6)) << "runs past the end";
    QTest::newRow("question cut off") << (header(0, 1, 0) + QByteArray("\x01" "a\x00\x00\x01", 5)) << "cut off";
    QTest::newRow("data past end") << (header(0x8400, 0, 1) + serviceName + ptrFixed + QByteArray("\x00\x20\x00", 3))
                                   << "says 32 bytes of data";
    QTest::newRow("A of 5 bytes") << (header(0x8400, 0, 1) + QByteArray("\x01h\x00\x00\x01\x00\x01\x00\x00\x00\x78"
                                                                        "\x00\x05\x01\x02\x03\x04\x05", 18))
                                  << "5 bytes of address, not 4";
    QTest::newRow("PTR name shorter than data")
        << (header(0x8400, 0, 1) + serviceName + ptrFixed + QByteArray("\x00\x04\x01x\x00\x00", 6))
        << "name of other length";
    QTest::newRow("PTR name past data")
        << (header(0x8400, 0, 1) + serviceName + ptrFixed + QByteArray("\x00\x02\x01x\x00", 5))
        << "name of other length";
    QTest::newRow("SRV too short")
        << (header(0x8400, 0, 1) + QByteArray("\x01s\x00\x00\x21\x00\x01\x00\x00\x00\x78\x00\x06", 13)
            + QByteArray(6, '\0'))
        << "too short for a service record";
    QByteArray hugeTxt = header(0x8400, 0, 1) + QByteArray("\x01t\x00\x00\x10\x00\x01\x00\x00\x00\x78\x05\x15", 13);
    for (int i = 0; i < 6; ++i)
        hugeTxt += char(220) + QByteArray(220, 'k');
    hugeTxt += QByteArray("\x0d", 1) + QByteArray(13, 'k'); // 6 * 221 + 14 = 1340 bytes
    QTest::newRow("huge TXT") << hugeTxt << "more than the 1300 a TXT record may have";
    QTest::newRow("TXT string past its end")
        << (header(0x8400, 0, 1) + QByteArray("\x01t\x00\x00\x10\x00\x01\x00\x00\x00\x78\x00\x03\x05" "ab", 16))
        << "string that runs past its end";
    QTest::newRow("trailing bytes") << (header(0, 0, 0) + QByteArray("xyz")) << "3 bytes after the last record";
}

void tst_MdnsMessage::hostileMessagesAreRefused()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    expectRefused(bytes, reason);
}

void tst_MdnsMessage::longNameThroughPointersIsRefused()
{
    // Given names that each add 60 bytes before pointing back to the
    // previous one, a name of five such links is over 255 bytes ...
    QByteArray m = header(0, 5, 0);
    QList<int> starts;
    for (int i = 0; i < 5; ++i) {
        starts << int(m.size());
        m += char(59) + QByteArray(59, char('a' + i));
        if (i == 0)
            m += '\0';
        else
            m += char(0xC0 | (starts[i - 1] >> 8)) + QByteArray(1, char(starts[i - 1] & 0xFF));
        m += QByteArray("\x00\x01\x00\x01", 4);
    }
    // ... and is refused though every pointer leads back.
    expectRefused(m, QStringLiteral("longer than 255 bytes"));
    // Four of them (240 bytes and the root's) are a name.
    QByteArray four = m.left(starts[4]);
    four[5] = 4;
    const auto parsed = DnsMessage::parse(four);
    QVERIFY2(parsed, whyNot(parsed).constData());
    QCOMPARE(parsed->questions[3].name.size(), 4);
    // Given a chain of 17 pointers each leading to the one before: refused.
    QByteArray chain = header(0, 18, 0) + QByteArray("\x00\x00\x01\x00\x01", 5);
    int last = 12;
    for (int i = 0; i < 17; ++i) {
        const int here = int(chain.size());
        chain += char(0xC0) + QByteArray(1, char(last)) + QByteArray("\x00\x01\x00\x01", 4);
        last = here;
    }
    expectRefused(chain, QStringLiteral("more than 16 compression pointers"));
}

void tst_MdnsMessage::txtRoundTrip()
{
    const DnsSdService s = sampleService();
    QCOMPARE(s.txt().first(), QByteArray("txtvers=1"));
    QCOMPARE(s.txt().at(1), QByteArray("world=") + DnsSdService::hashOf(QStringLiteral("blue")).toHex());
    QCOMPARE(s.txt().last(), QByteArray("addr=10.48.0.2,fd00::2"));
    auto back = DnsSdService::fromTxt(s.txt());
    QVERIFY2(back, whyNot(back).constData());
    back->port = s.port; // the port travels in the SRV record
    QCOMPARE(*back, s);
    // Keys without regard to case; a later duplicate is ignored (RFC 6763 6.4).
    QList<QByteArray> upper = s.txt();
    upper[2] = "ID=" + s.nodeId.toUtf8();
    upper << "id=someone-else";
    const auto again = DnsSdService::fromTxt(upper);
    QVERIFY2(again, whyNot(again).constData());
    QCOMPARE(again->nodeId, s.nodeId);
    QCOMPARE(DnsSdService::hashOf(QStringLiteral("blue")).size(), 8);
    QVERIFY(DnsSdService::hashOf(QStringLiteral("blue")) != DnsSdService::hashOf(QStringLiteral("Blue")));
}

void tst_MdnsMessage::badTxtIsRefused_data()
{
    QTest::addColumn<int>("index");
    QTest::addColumn<QByteArray>("string");
    QTest::addColumn<QString>("reason");
    QTest::newRow("version 2") << 0 << QByteArray("txtvers=2") << "TXT version '2'";
    QTest::newRow("short hash") << 1 << QByteArray("world=abcd") << "no world hash";
    QTest::newRow("hash not hex") << 1 << QByteArray("world=zz00000000000000") << "no world hash";
    QTest::newRow("empty id") << 2 << QByteArray("id=") << "no node id";
    QTest::newRow("long id") << 2 << (QByteArray("id=") + QByteArray(64, 'x')) << "no node id";
    QTest::newRow("id not UTF-8") << 2 << QByteArray("id=\xff\xfe") << "not UTF-8";
    QTest::newRow("size") << 3 << QByteArray("size=lots") << "not a number";
    QTest::newRow("size too big") << 3 << QByteArray("size=5000") << "not a number";
    QTest::newRow("no transport") << 4 << QByteArray("tr=") << "no transport";
    QTest::newRow("bad address") << 5 << QByteArray("addr=10.0.0.1,nowhere") << "'nowhere' is not an IP address";
    QTest::newRow("scoped address") << 5 << QByteArray("addr=fe80::1%eth0") << "not an IP address";
    QTest::newRow("nine addresses") << 5 << QByteArray("addr=1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4,1.1.1.5,1.1.1.6,1.1.1.7,"
                                                      "1.1.1.8,1.1.1.9")
                                    << "9 addresses (8 allowed)";
    QTest::newRow("no key") << 5 << QByteArray("=x") << "no valid key";
}

void tst_MdnsMessage::badTxtIsRefused()
{
    QFETCH(int, index);
    QFETCH(QByteArray, string);
    QFETCH(QString, reason);
    QList<QByteArray> txt = sampleService().txt();
    txt[index] = string;
    const auto parsed = DnsSdService::fromTxt(txt);
    QVERIFY2(!parsed, "a bad TXT was accepted");
    QCOMPARE(parsed.error().code, ErrorCode::BadDnsMessage);
    QVERIFY2(parsed.error().message.contains(reason), qPrintable(parsed.error().message));
}

void tst_MdnsMessage::otherWorldsAndLiesAreIgnored()
{
    const DnsSdService s = sampleService();
    const QByteArray blue = DnsSdService::hashOf(QStringLiteral("blue"));
    // Given a well-formed response of world blue: found, port from the SRV.
    QList<DnsSdService> found = DnsSdService::fromMessage(responseOf(s), blue);
    QCOMPARE(found.size(), 1);
    QCOMPARE(found[0].port, s.port);
    QCOMPARE(found[0].nodeId, s.nodeId);
    // Another world's: ignored, saying so.
    QStringList why;
    QVERIFY(DnsSdService::fromMessage(responseOf(s), DnsSdService::hashOf(QStringLiteral("red")), &why).isEmpty());
    QVERIFY2(why.join(u' ').contains(QStringLiteral("of another world")), qPrintable(why.join(u' ')));
    // A goodbye (time to live 0) finds nobody.
    QVERIFY(DnsSdService::fromMessage(responseOf(s, 0), blue).isEmpty());
    // A TXT that names another node than its instance: ignored.
    DnsMessage lie = responseOf(s);
    lie.answers[2].texts[2] = "id=someone-else";
    why.clear();
    QVERIFY(DnsSdService::fromMessage(lie, blue, &why).isEmpty());
    QVERIFY2(why.join(u' ').contains(QStringLiteral("says it is node 'someone-else'")), qPrintable(why.join(u' ')));
    // A PTR without its SRV: ignored.
    DnsMessage bare = responseOf(s);
    bare.answers.removeAt(1);
    why.clear();
    QVERIFY(DnsSdService::fromMessage(bare, blue, &why).isEmpty());
    QVERIFY2(why.join(u' ').contains(QStringLiteral("without its SRV record")), qPrintable(why.join(u' ')));
    // The same instance twice in one message is one service.
    DnsMessage twice = responseOf(s);
    twice.additionals = twice.answers;
    QCOMPARE(DnsSdService::fromMessage(twice, blue).size(), 1);
}

void tst_MdnsMessage::addressesFromSender()
{
    DnsSdService s = sampleService();
    // The sender is listed: it goes first.
    QCOMPARE(s.addressesFrom(QHostAddress(QStringLiteral("fd00::2"))),
             (QStringList{QStringLiteral("tcp://[fd00::2]:40123"), QStringLiteral("tcp://10.48.0.2:40123")}));
    // Not listed: the listed ones only, in order.
    QCOMPARE(s.addressesFrom(QHostAddress(QStringLiteral("10.9.9.9"))),
             (QStringList{QStringLiteral("tcp://10.48.0.2:40123"), QStringLiteral("tcp://[fd00::2]:40123")}));
    // "Any": the sender's address.
    s.hosts = {QHostAddress(QHostAddress::AnyIPv4)};
    QCOMPARE(s.addressesFrom(QHostAddress(QStringLiteral("10.9.9.9"))), QStringList{QStringLiteral("tcp://10.9.9.9:40123")});
    QCOMPARE(s.records(DnsSdService::Ttl)->size(), 3); // no A record for "any"
}

namespace {

DnsSdService sampleWorld()
{
    DnsSdService s = sampleService();
    s.kind = DnsSdService::Kind::World;
    s.worldName = QStringLiteral("blue");
    s.hostLabel = QStringLiteral("ada-laptop");
    s.joined = 2;
    return s;
}

} // namespace

void tst_MdnsMessage::worldAnnouncementRoundTrip()
{
    // Given a root's announcement of world blue, two of three joined ...
    const DnsSdService w = sampleWorld();
    QCOMPARE(w.txt().mid(6), (QList<QByteArray>{"name=blue", "host=ada-laptop", "joined=2"}));
    const DnsMessage m = responseOf(w, DnsSdService::WorldTtl);
    QVERIFY(DnsMessage::sameName(m.answers.first().name, {"_mmpi-world", "_tcp", "local"}));
    QCOMPARE(m.answers.first().ttl, DnsSdService::WorldTtl);
    const auto bytes = m.encode();
    QVERIFY2(bytes, whyNot(bytes).constData());
    const auto parsed = DnsMessage::parse(*bytes);
    QVERIFY2(parsed, whyNot(parsed).constData());
    // ... a browser of every world finds it with its name and counts ...
    const QList<DnsSdService> found = DnsSdService::fromMessage(*parsed, {}, nullptr, DnsSdService::Kind::World);
    QCOMPARE(found.size(), 1);
    DnsSdService expected = w;
    QCOMPARE(found.first(), expected);
    // ... a root browsing for nodes of blue does not take it for one, nor
    // a browser of worlds a node's service for a world ...
    QVERIFY(DnsSdService::fromMessage(*parsed, w.worldHash).isEmpty());
    QVERIFY(DnsSdService::fromMessage(responseOf(sampleService()), {}, nullptr, DnsSdService::Kind::World).isEmpty());
    // ... and its goodbye names the root.
    QCOMPARE(DnsSdService::goodbyesIn(responseOf(w, 0), DnsSdService::Kind::World), QStringList{w.nodeId});
    QVERIFY(DnsSdService::goodbyesIn(responseOf(w, 0), DnsSdService::Kind::Node).isEmpty());
    QVERIFY(DnsSdService::goodbyesIn(m, DnsSdService::Kind::World).isEmpty());
}

void tst_MdnsMessage::badWorldTxtIsRefused_data()
{
    QTest::addColumn<int>("index");
    QTest::addColumn<QByteArray>("string");
    QTest::addColumn<QString>("reason");
    QTest::newRow("no name") << 6 << QByteArray("name=") << "no world name";
    QTest::newRow("long name") << 6 << (QByteArray("name=") + QByteArray(256, 'x')) << "no world name";
    QTest::newRow("name not UTF-8") << 6 << QByteArray("name=\xff") << "no world name";
    QTest::newRow("another world's name") << 6 << QByteArray("name=red") << "does not match its world hash";
    QTest::newRow("long host") << 7 << (QByteArray("host=") + QByteArray(64, 'h')) << "host";
    QTest::newRow("joined missing") << 8 << QByteArray("size=3") << "joined";
    QTest::newRow("joined too many") << 8 << QByteArray("joined=4097") << "joined";
    QTest::newRow("joined negative") << 8 << QByteArray("joined=-1") << "joined";
}

void tst_MdnsMessage::badWorldTxtIsRefused()
{
    QFETCH(int, index);
    QFETCH(QByteArray, string);
    QFETCH(QString, reason);
    QList<QByteArray> txt = sampleWorld().txt();
    txt[index] = string;
    const auto parsed = DnsSdService::fromTxt(txt, DnsSdService::Kind::World);
    QVERIFY2(!parsed, "a bad world TXT was accepted");
    QCOMPARE(parsed.error().code, ErrorCode::BadDnsMessage);
    QVERIFY2(parsed.error().message.contains(reason), qPrintable(parsed.error().message));
    // The same strings as a node's TXT are still a node's: the world keys are extra.
    QVERIFY(DnsSdService::fromTxt(txt));
}

QTEST_GUILESS_MAIN(tst_MdnsMessage)
#include "tst_mdnsmessage.moc"
