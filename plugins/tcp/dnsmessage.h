// DnsMessage: one DNS message as multicast DNS carries it (RFC 1035 section
// 4, RFC 6762): header, questions and resource records, read strictly and
// within fixed bounds, and written back (names uncompressed). What the
// built-in mDNS responder (MdnsResponder) reads off the network and sends.
// The records DNS-SD needs (PTR, SRV, TXT, A, AAAA) are decoded, any other
// kept as its bytes. parse() takes untrusted input: a compression loop, an
// oversized name or TXT record, counts the message cannot hold or a cut-off
// record is refused with BadDnsMessage and the reason, and nothing is
// allocated beyond the message's own size.
#pragma once

#include <mmpi/core/result.h>

#include <QByteArray>
#include <QByteArrayView>
#include <QHostAddress>
#include <QList>

namespace mmpi {

struct DnsMessage
{
    // RFC 6762 section 17: a multicast DNS message is at most 9000 bytes.
    static constexpr int MaxMessageSize = 9000;
    static constexpr int MaxLabelSize = 63;   // RFC 1035 section 2.3.4
    static constexpr int MaxNameSize = 255;   // in wire form, length bytes and root included
    // Compression pointers followed in one name. Each must point before the
    // last one (no loop can be followed), and real names need 1 or 2.
    static constexpr int MaxPointers = 16;
    // Questions and records of one message together. Every entry takes at
    // least 5 bytes on the wire, so the counts are also checked against the
    // message's size before anything is read.
    static constexpr int MaxEntries = 256;
    // RFC 6763 section 6.2: a TXT record should fit in 1300 bytes; larger
    // ones are refused, not truncated.
    static constexpr int MaxTxtSize = 1300;

    enum Type : quint16 { A = 1, Ptr = 12, Txt = 16, Aaaa = 28, Srv = 33, Any = 255 };
    static constexpr quint16 ClassIn = 1;
    // The top bit of a question's class asks for a unicast answer (QU), of
    // a record's class says "flush your cache" (RFC 6762 sections 5.4, 10.2).
    static constexpr quint16 TopClassBit = 0x8000;
    static constexpr quint16 ResponseFlags = 0x8400; // QR and AA

    // A domain name as its labels, without the root's empty one.
    using Name = QList<QByteArray>;

    struct Question
    {
        Name name;
        quint16 type = 0;
        quint16 questionClass = ClassIn;
        bool operator==(const Question &) const = default;
    };

    struct Record
    {
        Name name;
        quint16 type = 0;
        quint16 recordClass = ClassIn;
        quint32 ttl = 0;
        Name target;                 // PTR: the name pointed to; SRV: the host
        quint16 priority = 0;        // SRV
        quint16 weight = 0;          // SRV
        quint16 port = 0;            // SRV
        QList<QByteArray> texts;     // TXT: its strings
        QHostAddress address;        // A, AAAA
        QByteArray data;             // any other type: the record's data as received
        bool operator==(const Record &) const = default;
    };

    quint16 id = 0;
    quint16 flags = 0;
    QList<Question> questions;
    QList<Record> answers;
    QList<Record> authorities;
    QList<Record> additionals;
    bool operator==(const DnsMessage &) const = default;

    static Record makeRecord(const Name &name, quint16 type, quint16 recordClass, quint32 ttl)
    {
        Record r;
        r.name = name;
        r.type = type;
        r.recordClass = recordClass;
        r.ttl = ttl;
        return r;
    }

    bool isResponse() const { return flags & 0x8000; }
    // Every record of the three sections, answers first.
    QList<Record> records() const { return answers + authorities + additionals; }

    // BadDnsMessage with the reason the bytes are not a message this parser
    // reads (see the limits above; also a non-zero opcode or response code,
    // which RFC 6762 section 18 says to ignore, and bytes after the last record).
    static Result<DnsMessage> parse(QByteArrayView bytes);
    // BadDnsMessage if a name, TXT string or the whole would break a limit.
    Result<QByteArray> encode() const;

    // DNS names compare without regard to ASCII case (RFC 1035 section 2.3.3).
    static bool sameName(const Name &a, const Name &b);
    // "node._mmpi._tcp.local", for logs (dots inside labels escaped as "\.").
    static QString nameText(const Name &name);
};

} // namespace mmpi
