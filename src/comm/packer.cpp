#include <mmpi/comm/packer.h>

#include <QtEndian>

#include <limits>

namespace mmpi {

Packer &Packer::pack(const QString &text)
{
    const QStringView units(text);
    return pack(std::span<const char16_t>(units.utf16(), std::size_t(units.size())));
}

Packer &Packer::pack(const QByteArray &bytes)
{
    const auto *data = reinterpret_cast<const quint8 *>(bytes.constData());
    return pack(std::span<const quint8>(data, std::size_t(bytes.size())));
}

Packer &Packer::packObject(const QByteArray &serialized)
{
    return appendRun(ItemType::Object, 1, encodeObjects({serialized}));
}

void Packer::clear()
{
    m_buffer.clear();
    m_runCount = 0;
}

Packer &Packer::appendRun(ItemType type, std::size_t count, const QByteArray &body)
{
    // The count field is 32 bits; a larger run cannot be described, and
    // writing it modulo 2^32 would make the reader misparse everything after.
    Q_ASSERT_X(count <= std::numeric_limits<quint32>::max(), "mmpi::Packer::pack",
               "a run holds at most 2^32 - 1 items");
    char header[RunHeaderSize];
    header[0] = char(quint8(type));
    qToBigEndian<quint32>(quint32(count), header + 1);
    m_buffer.append(header, RunHeaderSize);
    m_buffer.append(body);
    ++m_runCount;
    return *this;
}

} // namespace mmpi
