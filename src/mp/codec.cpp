#include <mmpi/mp/codec.h>

namespace mmpi::mp {

qint64 payloadLength(quint8 code, qint64 count)
{
    if (!typeFromCode(code) || count < 0)
        return -1;
    return count * bytesPerItem(code);
}

Result<QByteArray> encodeMessage(const Message &message)
{
    if (!typeFromCode(message.typeCode))
        return Error(ErrorCode::BadItemType,
                     QStringLiteral("type code %1 is not an edu.rit.mp type (1..13)").arg(message.typeCode));
    if (message.count < 0)
        return Error(ErrorCode::BadHeader, QStringLiteral("negative item count %1").arg(message.count));
    const qint64 length = payloadLength(message.typeCode, message.count);
    if (message.items.size() != length)
        return Error(ErrorCode::CountMismatch,
                     QStringLiteral("%1 items of %2 take %3 bytes, got %4")
                         .arg(message.count).arg(codeName(message.typeCode)).arg(length).arg(message.items.size()));
    QByteArray bytes(HeaderSize, Qt::Uninitialized);
    char *out = bytes.data();
    qToBigEndian(Magic, out);
    qToBigEndian(message.tag, out + 4);
    out[8] = char(message.typeCode);
    qToBigEndian(message.count, out + 9);
    bytes.append(message.items);
    return bytes;
}

namespace detail {
Error typeMismatch(quint8 code, const char *cppType)
{
    return Error(ErrorCode::TypeMismatch,
                 QStringLiteral("a message of %1 items cannot be read as %2").arg(codeName(code), QLatin1String(cppType)));
}
} // namespace detail

} // namespace mmpi::mp
