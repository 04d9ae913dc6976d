// libFuzzer target for what DNS-SD reads off the network: a multicast DNS
// message (DnsMessage::parse, plugins/tcp) and the `_mmpi._tcp` services a
// response describes (DnsSdService::fromMessage, which reads their TXT).
// Byte 0 chooses: bit 0 clear, the rest is a message; set, the rest is the
// data of a TXT record, put into a response beside a PTR and SRV of an
// instance of world "fuzz" (so the TXT parser sees every input).
// Besides not crashing, hanging or allocating beyond the input's size:
// - a refused message is BadDnsMessage;
// - an accepted one has at most 256 entries, names within 255 bytes of
//   1..63-byte labels, TXT records within 1300 bytes; written out again
//   (uncompressed) it reads back to itself, unless it grew past 9000 bytes;
// - a service found is of the world asked for, has a node id of 1..63
//   bytes, 1..8 hosts and a port, and its own records encode.
#include "dnsmessage.h"
#include "dnssdservice.h"
#include "invariant.h"

#include <cstddef>
#include <cstdint>

using namespace mmpi;

namespace {

bool nameOk(const DnsMessage::Name &name)
{
    int size = 1;
    for (const QByteArray &label : name) {
        if (label.isEmpty() || label.size() > DnsMessage::MaxLabelSize)
            return false;
        size += 1 + int(label.size());
    }
    return size <= DnsMessage::MaxNameSize;
}

// What a browser of worlds of any name takes from `m`: roots' announcements.
void checkWorlds(const DnsMessage &m)
{
    for (const DnsSdService &world : DnsSdService::fromMessage(m, {}, nullptr, DnsSdService::Kind::World)) {
        const qsizetype name = world.worldName.toUtf8().size();
        fuzz::check(name >= 1 && name <= DnsSdService::MaxWorldNameSize, "a world name of 1..255 bytes");
        fuzz::check(DnsSdService::hashOf(world.worldName) == world.worldHash, "the name is the hash's");
        fuzz::check(world.hostLabel.toUtf8().size() <= DnsSdService::MaxHostNameSize, "a host of at most 63 bytes");
        fuzz::check(world.joined >= 0 && world.joined <= 4096, "joined 0..4096");
        fuzz::check(bool(world.records(DnsSdService::WorldTtl)), "an announcement found has records of its own");
    }
    for (const QString &id : DnsSdService::goodbyesIn(m, DnsSdService::Kind::World))
        fuzz::check(!id.isEmpty(), "a goodbye names its root");
}

void checkMessage(const DnsMessage &m, const QByteArray &worldHash)
{
    const QList<DnsMessage::Record> records = m.records();
    fuzz::check(m.questions.size() + records.size() <= DnsMessage::MaxEntries, "at most 256 entries");
    for (const DnsMessage::Question &q : m.questions)
        fuzz::check(nameOk(q.name), "a question's name within the limits");
    for (const DnsMessage::Record &r : records) {
        fuzz::check(nameOk(r.name) && nameOk(r.target), "a record's names within the limits");
        qsizetype txt = 0;
        for (const QByteArray &t : r.texts)
            txt += 1 + t.size();
        fuzz::check(txt <= DnsMessage::MaxTxtSize, "a TXT record within 1300 bytes");
    }
    const auto bytes = m.encode();
    if (!bytes) {
        fuzz::check(bytes.error().code == ErrorCode::BadDnsMessage
                        && bytes.error().message.contains(QStringLiteral("multicast DNS allows")),
                    "an accepted message fails to encode only for its size");
    } else {
        const auto back = DnsMessage::parse(*bytes);
        fuzz::check(back && *back == m, "an accepted message reads back to itself");
    }
    for (const DnsSdService &service : DnsSdService::fromMessage(m, worldHash)) {
        fuzz::check(service.worldHash == worldHash, "a service of the world asked for");
        const qsizetype id = service.nodeId.toUtf8().size();
        fuzz::check(id >= 1 && id <= DnsMessage::MaxLabelSize, "a node id of 1..63 bytes");
        fuzz::check(!service.hosts.isEmpty() && service.hosts.size() <= DnsSdService::MaxHosts, "1..8 hosts");
        fuzz::check(service.port != 0, "a port");
        fuzz::check(bool(service.records(DnsSdService::Ttl)), "a service found has records of its own");
    }
    checkWorlds(m);
}

void fuzzMessage(QByteArrayView data, const QByteArray &worldHash)
{
    const auto message = DnsMessage::parse(data);
    if (!message) {
        fuzz::check(message.error().code == ErrorCode::BadDnsMessage, "a refused message is BadDnsMessage");
        return;
    }
    checkMessage(*message, worldHash);
}

// n1.<service>._tcp.local PTR and SRV, then TXT with `txt` as its data,
// compressed as responders write it.
QByteArray txtMessage(const QByteArray &service, QByteArrayView txt)
{
    const char label = char(service.size());
    const char local = char(12 + 1 + service.size() + 5);   // "\x05local" within the first name
    const char instance = char(12 + 1 + service.size() + 12 + 10); // "\x02n1" in the PTR's data
    QByteArray m("\x00\x00\x84\x00\x00\x00\x00\x03\x00\x00\x00\x00", 12);
    m += label + service + QByteArray("\x04_tcp\x05local\x00\x00\x0c\x00\x01\x00\x00\x00\x78\x00\x05\x02n1\xc0\x0c", 27);
    m += QByteArray("\xc0") + instance + QByteArray("\x00\x21\x80\x01\x00\x00\x00\x78\x00\x0a\x00\x00\x00\x00\x9c\xbb\x01h\xc0", 19) + local;
    m += QByteArray("\xc0") + instance + QByteArray("\x00\x10\x80\x01\x00\x00\x00\x78", 8);
    m += char(txt.size() >> 8);
    m += char(txt.size() & 0xFF);
    m += txt.toByteArray();
    return m;
}

void fuzzTxt(QByteArrayView data, const QByteArray &worldHash)
{
    if (data.size() > 0xFFFF)
        return;
    fuzzMessage(txtMessage(QByteArrayLiteral("_mmpi"), data), worldHash);
    fuzzMessage(txtMessage(QByteArrayLiteral("_mmpi-world"), data), worldHash);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1)
        return 0;
    static const QByteArray worldHash = DnsSdService::hashOf(QStringLiteral("fuzz"));
    const QByteArrayView input(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    if (data[0] & 1)
        fuzzTxt(input, worldHash);
    else
        fuzzMessage(input, worldHash);
    return 0;
}
