// Writes the seed corpus of fuzz_mdns: a root's query, a node's announcement
// of world "fuzz" (IPv4 and IPv6 hosts, and an "any" one), its goodbye, a
// response compressed as other responders write it, and TXT records alone,
// one well-formed and one with every key doubled. Run:
// fuzz_make_mdns_corpus <dir>.
#include "dnsmessage.h"
#include "dnssdservice.h"
#include "seedfiles.h"

using namespace mmpi;

namespace {

// Node "n1", the instance fuzz_mdns puts a TXT record's input under.
DnsSdService service(const QList<QHostAddress> &hosts, const QString &nodeId = QStringLiteral("n1"))
{
    DnsSdService s;
    s.worldHash = DnsSdService::hashOf(QStringLiteral("fuzz"));
    s.nodeId = nodeId;
    s.sizeWanted = 4;
    s.hosts = hosts;
    s.port = 40123;
    return s;
}

bool writeMessage(const QString &dir, const QString &name, const DnsMessage &message)
{
    const auto bytes = message.encode();
    return bytes && fuzz::writeSeedFile(dir, name, {QByteArrayView("\0", 1), *bytes});
}

bool writeResponse(const QString &dir, const QString &name, const DnsSdService &s, quint32 ttl)
{
    DnsMessage m;
    m.flags = DnsMessage::ResponseFlags;
    const auto records = s.records(ttl);
    if (!records)
        return false;
    m.answers = *records;
    return writeMessage(dir, name, m);
}

bool writeTxt(const QString &dir, const QString &name, const QList<QByteArray> &strings)
{
    QByteArray data;
    for (const QByteArray &s : strings)
        data += char(s.size()) + s;
    return fuzz::writeSeedFile(dir, name, {QByteArrayView("\1", 1), data});
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    DnsMessage query;
    query.questions << DnsMessage::Question{DnsSdService::serviceName(), DnsMessage::Ptr, DnsMessage::ClassIn};
    const DnsSdService both = service({QHostAddress(QStringLiteral("10.48.0.2")), QHostAddress(QStringLiteral("fd00::2"))});
    bool ok = writeMessage(dir, QStringLiteral("query"), query)
        && writeResponse(dir, QStringLiteral("announcement"), both, DnsSdService::Ttl)
        && writeResponse(dir, QStringLiteral("announcement-uuid"),
                         service(both.hosts, QStringLiteral("5f0c2a3e-1111-2222-3333-444455556666")), 120)
        && writeResponse(dir, QStringLiteral("announcement-any"), service({QHostAddress(QHostAddress::AnyIPv4)}), 120)
        && writeResponse(dir, QStringLiteral("goodbye"), both, 0)
        && writeTxt(dir, QStringLiteral("txt"), both.txt());
    QList<QByteArray> doubled = both.txt();
    doubled += both.txt();
    ok = ok && writeTxt(dir, QStringLiteral("txt-doubled"), doubled);
    // Compressed: the PTR's name at byte 12, its target "n1" + pointer, an A
    // record of host "h" + pointer to "local".
    const QByteArray compressed("\x00\x00\x84\x00\x00\x00\x00\x02\x00\x00\x00\x00"
                                "\x05_mmpi\x04_tcp\x05local\x00\x00\x0c\x00\x01\x00\x00\x00\x78\x00\x05\x02n1\xc0\x0c"
                                "\x01h\xc0\x17\x00\x01\x80\x01\x00\x00\x00\x78\x00\x04\x0a\x00\x00\x07", 63);
    ok = ok && fuzz::writeSeedFile(dir, QStringLiteral("compressed"), {QByteArrayView("\0", 1), compressed});
    return fuzz::corpusStatus(ok, dir);
}
