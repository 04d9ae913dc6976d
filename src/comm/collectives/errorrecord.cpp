#include "errorrecord.h"

#include <mmpi/wire/itemcodec.h>

#include <QDataStream>
#include <QIODevice>

namespace mmpi::detail {

namespace {

// A count from the wire is checked against the bytes there before anything is allocated.
bool readRanks(QDataStream &in, qsizetype recordBytes, QList<int> &ranks)
{
    qint32 count = -1;
    in >> count;
    if (in.status() != QDataStream::Ok || count < 0 || count > recordBytes / qsizetype(sizeof(qint32)))
        return false;
    ranks.reserve(count);
    for (qint32 i = 0; i < count; ++i) {
        qint32 rank = -1;
        in >> rank;
        ranks.append(rank);
    }
    return in.status() == QDataStream::Ok && in.atEnd();
}

} // namespace

Payload encodeErrorRecord(const ErrorRecord &record)
{
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    out.setVersion(QDataStream::Qt_6_4);
    out << qint32(record.error.code) << record.error.message;
    if (!record.ranks.isEmpty()) {
        out << qint32(record.ranks.size());
        for (int rank : record.ranks)
            out << qint32(rank);
    }
    return {ItemType::Object, 1, encodeObjects({bytes})};
}

std::optional<ErrorRecord> decodeErrorRecord(const Frame &frame)
{
    if (frame.header.itemType != ItemType::Object || frame.header.count != 1)
        return std::nullopt;
    const auto records = decodeObjects(1, frame.payload);
    if (!records)
        return std::nullopt;
    QDataStream in(records->first());
    in.setVersion(QDataStream::Qt_6_4);
    qint32 code = 0;
    ErrorRecord record;
    in >> code >> record.error.message;
    if (!in.atEnd() && !readRanks(in, records->first().size(), record.ranks))
        return std::nullopt;
    if (in.status() != QDataStream::Ok || code <= 0 || code > int(LastErrorCode))
        return std::nullopt;
    record.error.code = ErrorCode(code);
    return record;
}

} // namespace mmpi::detail
