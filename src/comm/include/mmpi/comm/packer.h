// mmpi::Packer: MPI_Pack for MMPI. Writes several typed item runs into one
// buffer, so a heterogeneous record travels as one message; mmpi::Unpacker reads
// the runs back in the same order. The format is docs/reference/packer.md#packed-buffer.
#pragma once

#include <mmpi/wire/itemcodec.h>
#include <mmpi/wire/itemtype.h>

#include <QByteArray>
#include <QDataStream>
#include <QIODevice>
#include <QList>
#include <QString>

#include <cstddef>
#include <span>

namespace mmpi {

// The QDataStream format of packed objects. Fixed rather than Qt's current one
// so that nodes built against different Qt versions read each other's records.
inline void setPackedStreamFormat(QDataStream &stream)
{
    stream.setVersion(QDataStream::Qt_6_4);
    stream.setByteOrder(QDataStream::BigEndian);
}

class Packer
{
public:
    // Every run starts with its item type code (u8) and item count (u32).
    static constexpr qsizetype RunHeaderSize = 5;

    // One run of items. `as` declares the run's item type, e.g. SignedByte for
    // qint8; it must decode as T (asserted, as in encodeItems). A run holds at
    // most 2^32 - 1 items.
    template<ItemValue T>
    Packer &pack(std::span<const T> items, ItemType as = ItemTraits<T>::type)
    {
        return appendRun(as, items.size(), encodeItems<T>(items, as));
    }

    template<ItemValue T>
    Packer &pack(const QList<T> &items, ItemType as = ItemTraits<T>::type)
    {
        return pack(std::span<const T>(items.constData(), std::size_t(items.size())), as);
    }

    // A run of one item: pack(qint32(5)).
    template<ItemValue T>
    Packer &pack(T value, ItemType as = ItemTraits<T>::type)
    {
        return pack(std::span<const T>(&value, 1), as);
    }

    // A Char run of the string's UTF-16 code units (lone surrogates included).
    Packer &pack(const QString &text);
    // An UnsignedByte run of the bytes.
    Packer &pack(const QByteArray &bytes);
    // A string literal could mean either of the two above: say which.
    Packer &pack(const char *) = delete;

    // An Object run of one record holding `serialized` as is.
    Packer &packObject(const QByteArray &serialized);

    // An Object run of one record: `value` written with QDataStream in the
    // packed stream format. (A QByteArray argument takes the overload above.)
    template<typename T>
    Packer &packObject(const T &value)
    {
        QByteArray serialized;
        QDataStream out(&serialized, QIODevice::WriteOnly);
        setPackedStreamFormat(out);
        out << value;
        return packObject(serialized);
    }

    QByteArray buffer() const { return m_buffer; }
    qsizetype size() const { return m_buffer.size(); }
    int runCount() const { return m_runCount; }
    void clear();

private:
    Packer &appendRun(ItemType type, std::size_t count, const QByteArray &body);

    QByteArray m_buffer;
    int m_runCount = 0;
};

} // namespace mmpi
