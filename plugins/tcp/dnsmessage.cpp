#include "dnsmessage.h"

#include <QtEndian>

namespace mmpi {

namespace {

Error refused(const QString &why)
{
    return Error(ErrorCode::BadDnsMessage, why);
}

// Reads the message front to back; every read is checked against its end.
class Reader
{
public:
    explicit Reader(QByteArrayView data) : m_data(data) {}

    qsizetype position() const { return m_pos; }
    qsizetype left() const { return m_data.size() - m_pos; }

    bool u16(quint16 &out)
    {
        if (left() < 2)
            return false;
        out = qFromBigEndian<quint16>(m_data.data() + m_pos);
        m_pos += 2;
        return true;
    }
    bool u32(quint32 &out)
    {
        if (left() < 4)
            return false;
        out = qFromBigEndian<quint32>(m_data.data() + m_pos);
        m_pos += 4;
        return true;
    }

    // A name at the current position, following compression pointers
    // (RFC 1035 section 4.1.4). Each pointer must lead before the one
    // followed last, so the walk can only move back and must end.
    Result<DnsMessage::Name> name()
    {
        DnsMessage::Name labels;
        qsizetype pos = m_pos;
        qsizetype lowest = m_pos; // where the name started, then each pointer's target
        qsizetype resume = -1;    // where reading goes on after the first pointer
        int pointers = 0;
        int wireSize = 1;         // the root's zero byte
        for (;;) {
            if (pos >= m_data.size())
                return refused(QStringLiteral("a name runs past the end of the message at byte %1").arg(pos));
            const quint8 length = quint8(m_data[pos]);
            if ((length & 0xC0) == 0xC0) {
                if (pos + 1 >= m_data.size())
                    return refused(QStringLiteral("a compression pointer is cut off at byte %1").arg(pos));
                const qsizetype target = ((length & 0x3F) << 8) | quint8(m_data[pos + 1]);
                if (++pointers > DnsMessage::MaxPointers)
                    return refused(QStringLiteral("a name follows more than %1 compression pointers")
                                       .arg(DnsMessage::MaxPointers));
                if (target >= lowest)
                    return refused(QStringLiteral("the compression pointer at byte %1 leads forward to byte %2 "
                                                  "(a loop, or not a name)").arg(pos).arg(target));
                if (resume < 0)
                    resume = pos + 2;
                lowest = target;
                pos = target;
                continue;
            }
            if (length & 0xC0)
                return refused(QStringLiteral("label type 0x%1 at byte %2 is not one of RFC 1035")
                                   .arg(length & 0xC0, 2, 16, QLatin1Char('0')).arg(pos));
            if (length == 0) {
                m_pos = resume >= 0 ? resume : pos + 1;
                return labels;
            }
            wireSize += 1 + length;
            if (wireSize > DnsMessage::MaxNameSize)
                return refused(QStringLiteral("a name is longer than %1 bytes").arg(DnsMessage::MaxNameSize));
            if (pos + 1 + length > m_data.size())
                return refused(QStringLiteral("a label of %1 bytes at byte %2 runs past the end of the message")
                                   .arg(length).arg(pos));
            labels.append(m_data.sliced(pos + 1, length).toByteArray());
            pos += 1 + length;
        }
    }

    Result<DnsMessage::Question> question()
    {
        DnsMessage::Question q;
        auto name = this->name();
        if (!name)
            return name.error();
        q.name = *name;
        if (!u16(q.type) || !u16(q.questionClass))
            return refused(QStringLiteral("the question for %1 is cut off").arg(DnsMessage::nameText(q.name)));
        return q;
    }

    Result<DnsMessage::Record> record()
    {
        DnsMessage::Record r;
        auto name = this->name();
        if (!name)
            return name.error();
        r.name = *name;
        quint16 length = 0;
        if (!u16(r.type) || !u16(r.recordClass) || !u32(r.ttl) || !u16(length))
            return refused(QStringLiteral("the record of %1 is cut off").arg(DnsMessage::nameText(r.name)));
        if (length > left())
            return refused(QStringLiteral("the record of %1 says %2 bytes of data, and %3 are left")
                               .arg(DnsMessage::nameText(r.name)).arg(length).arg(left()));
        const qsizetype end = m_pos + length;
        const QByteArrayView data = m_data.sliced(m_pos, length);
        const QString what = QStringLiteral("the %1 record of %2").arg(r.type).arg(DnsMessage::nameText(r.name));
        switch (r.type) {
        case DnsMessage::A:
        case DnsMessage::Aaaa: {
            const int size = r.type == DnsMessage::A ? 4 : 16;
            if (length != size)
                return refused(QStringLiteral("%1 has %2 bytes of address, not %3").arg(what).arg(length).arg(size));
            if (r.type == DnsMessage::A)
                r.address = QHostAddress(qFromBigEndian<quint32>(data.data()));
            else
                r.address = QHostAddress(reinterpret_cast<const quint8 *>(data.data()));
            m_pos = end;
            break;
        }
        case DnsMessage::Ptr:
        case DnsMessage::Srv: {
            if (r.type == DnsMessage::Srv && (!u16(r.priority) || !u16(r.weight) || !u16(r.port) || m_pos >= end))
                return refused(QStringLiteral("%1 is too short for a service record").arg(what));
            auto target = this->name();
            if (!target)
                return target.error();
            // The name's own bytes (not what its pointers lead to) fill the data exactly.
            if (m_pos != end)
                return refused(QStringLiteral("%1 holds a name of other length than its data").arg(what));
            r.target = *target;
            break;
        }
        case DnsMessage::Txt: {
            if (length > DnsMessage::MaxTxtSize)
                return refused(QStringLiteral("%1 has %2 bytes, more than the %3 a TXT record may have")
                                   .arg(what).arg(length).arg(DnsMessage::MaxTxtSize));
            qsizetype pos = 0;
            while (pos < length) {
                const quint8 size = quint8(data[pos]);
                if (pos + 1 + size > length)
                    return refused(QStringLiteral("%1 has a string that runs past its end").arg(what));
                r.texts.append(data.sliced(pos + 1, size).toByteArray());
                pos += 1 + size;
            }
            m_pos = end;
            break;
        }
        default:
            r.data = data.toByteArray();
            m_pos = end;
            break;
        }
        return r;
    }

private:
    QByteArrayView m_data;
    qsizetype m_pos = 0;
};

void appendU16(QByteArray &out, quint16 value)
{
    char bytes[2];
    qToBigEndian(value, bytes);
    out.append(bytes, 2);
}

void appendU32(QByteArray &out, quint32 value)
{
    char bytes[4];
    qToBigEndian(value, bytes);
    out.append(bytes, 4);
}

Result<void> appendName(QByteArray &out, const DnsMessage::Name &name)
{
    int wireSize = 1;
    for (const QByteArray &label : name) {
        if (label.isEmpty() || label.size() > DnsMessage::MaxLabelSize)
            return refused(QStringLiteral("a label of %1 bytes in %2 (1 to %3 allowed)")
                               .arg(label.size()).arg(DnsMessage::nameText(name)).arg(DnsMessage::MaxLabelSize));
        wireSize += 1 + int(label.size());
        if (wireSize > DnsMessage::MaxNameSize)
            return refused(QStringLiteral("the name %1 is longer than %2 bytes")
                               .arg(DnsMessage::nameText(name)).arg(DnsMessage::MaxNameSize));
    }
    for (const QByteArray &label : name) {
        out.append(char(label.size()));
        out.append(label);
    }
    out.append('\0');
    return success();
}

Result<void> appendRecord(QByteArray &out, const DnsMessage::Record &r)
{
    if (auto ok = appendName(out, r.name); !ok)
        return ok;
    appendU16(out, r.type);
    appendU16(out, r.recordClass);
    appendU32(out, r.ttl);
    QByteArray data;
    switch (r.type) {
    case DnsMessage::A: {
        bool ok = false;
        const quint32 v4 = r.address.toIPv4Address(&ok);
        if (!ok || r.address.protocol() != QAbstractSocket::IPv4Protocol)
            return refused(QStringLiteral("an A record of %1 needs an IPv4 address").arg(DnsMessage::nameText(r.name)));
        appendU32(data, v4);
        break;
    }
    case DnsMessage::Aaaa: {
        if (r.address.protocol() != QAbstractSocket::IPv6Protocol)
            return refused(QStringLiteral("an AAAA record of %1 needs an IPv6 address")
                               .arg(DnsMessage::nameText(r.name)));
        const Q_IPV6ADDR v6 = r.address.toIPv6Address();
        data.append(reinterpret_cast<const char *>(v6.c), 16);
        break;
    }
    case DnsMessage::Srv:
        appendU16(data, r.priority);
        appendU16(data, r.weight);
        appendU16(data, r.port);
        Q_FALLTHROUGH();
    case DnsMessage::Ptr:
        if (auto ok = appendName(data, r.target); !ok)
            return ok;
        break;
    case DnsMessage::Txt:
        for (const QByteArray &text : r.texts) {
            if (text.size() > 255)
                return refused(QStringLiteral("a TXT string of %1 bytes (255 allowed)").arg(text.size()));
            data.append(char(text.size()));
            data.append(text);
        }
        if (data.size() > DnsMessage::MaxTxtSize)
            return refused(QStringLiteral("a TXT record of %1 bytes (%2 allowed)")
                               .arg(data.size()).arg(DnsMessage::MaxTxtSize));
        break;
    default:
        data = r.data;
        break;
    }
    if (data.size() > 0xFFFF)
        return refused(QStringLiteral("a record with %1 bytes of data").arg(data.size()));
    appendU16(out, quint16(data.size()));
    out.append(data);
    return success();
}

} // namespace

Result<DnsMessage> DnsMessage::parse(QByteArrayView bytes)
{
    if (bytes.size() > MaxMessageSize)
        return refused(QStringLiteral("a message of %1 bytes (multicast DNS allows %2)")
                           .arg(bytes.size()).arg(MaxMessageSize));
    Reader in(bytes);
    DnsMessage message;
    quint16 counts[4] = {};
    if (!in.u16(message.id) || !in.u16(message.flags) || !in.u16(counts[0]) || !in.u16(counts[1])
        || !in.u16(counts[2]) || !in.u16(counts[3]))
        return refused(QStringLiteral("a message of %1 bytes is shorter than its 12-byte header").arg(bytes.size()));
    if ((message.flags >> 11) & 0xF)
        return refused(QStringLiteral("opcode %1 (multicast DNS ignores all but 0)").arg((message.flags >> 11) & 0xF));
    if (message.flags & 0xF)
        return refused(QStringLiteral("response code %1 (multicast DNS ignores all but 0)").arg(message.flags & 0xF));
    const int entries = counts[0] + counts[1] + counts[2] + counts[3];
    if (entries > MaxEntries)
        return refused(QStringLiteral("%1 questions and records (%2 allowed)").arg(entries).arg(MaxEntries));
    // A question takes at least 5 bytes (root name, type, class), a record 11.
    const qsizetype least = qsizetype(counts[0]) * 5 + qsizetype(entries - counts[0]) * 11;
    if (least > in.left())
        return refused(QStringLiteral("%1 questions and %2 records cannot fit in the %3 bytes after the header")
                           .arg(counts[0]).arg(entries - counts[0]).arg(in.left()));
    for (int i = 0; i < counts[0]; ++i) {
        auto q = in.question();
        if (!q)
            return q.error();
        message.questions.append(*q);
    }
    QList<Record> *sections[] = {&message.answers, &message.authorities, &message.additionals};
    for (int s = 0; s < 3; ++s) {
        for (int i = 0; i < counts[s + 1]; ++i) {
            auto r = in.record();
            if (!r)
                return r.error();
            sections[s]->append(*r);
        }
    }
    if (in.left() != 0)
        return refused(QStringLiteral("%1 bytes after the last record").arg(in.left()));
    return message;
}

Result<QByteArray> DnsMessage::encode() const
{
    const qsizetype entries = questions.size() + answers.size() + authorities.size() + additionals.size();
    if (entries > MaxEntries)
        return refused(QStringLiteral("%1 questions and records (%2 allowed)").arg(entries).arg(MaxEntries));
    QByteArray out;
    appendU16(out, id);
    appendU16(out, flags);
    appendU16(out, quint16(questions.size()));
    appendU16(out, quint16(answers.size()));
    appendU16(out, quint16(authorities.size()));
    appendU16(out, quint16(additionals.size()));
    for (const Question &q : questions) {
        if (auto ok = appendName(out, q.name); !ok)
            return ok.error();
        appendU16(out, q.type);
        appendU16(out, q.questionClass);
    }
    for (const auto *section : {&answers, &authorities, &additionals})
        for (const Record &r : *section)
            if (auto ok = appendRecord(out, r); !ok)
                return ok.error();
    if (out.size() > MaxMessageSize)
        return refused(QStringLiteral("a message of %1 bytes (multicast DNS allows %2)")
                           .arg(out.size()).arg(MaxMessageSize));
    return out;
}

bool DnsMessage::sameName(const Name &a, const Name &b)
{
    if (a.size() != b.size())
        return false;
    // ASCII only: a label's other bytes (UTF-8 in instance names) compare as they are.
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (a[i].size() != b[i].size())
            return false;
        for (qsizetype j = 0; j < a[i].size(); ++j)
            if (lower(a[i][j]) != lower(b[i][j]))
                return false;
    }
    return true;
}

QString DnsMessage::nameText(const Name &name)
{
    QStringList labels;
    for (const QByteArray &label : name)
        labels << QString::fromUtf8(label).replace(u'.', QStringLiteral("\\."));
    return labels.isEmpty() ? QStringLiteral(".") : labels.join(u'.');
}

} // namespace mmpi
