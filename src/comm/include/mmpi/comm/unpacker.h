// mmpi::Unpacker: MPI_Unpack for MMPI. Reads the runs an mmpi::Packer wrote, in
// order, checking each run's type and shape before decoding it. The buffer is
// untrusted: every failure is an mmpi::Error, and a failed call does not advance.
#pragma once

#include <mmpi/comm/packer.h>
#include <mmpi/core/result.h>
#include <mmpi/wire/itemcodec.h>
#include <mmpi/wire/itemtype.h>

#include <QByteArray>
#include <QDataStream>
#include <QList>
#include <QString>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>

namespace mmpi {

// Errors, for the next run:
//   TruncatedPayload  nothing left, or its header or body runs past the buffer's
//                     end, or it has more items than unpackInto's buffer holds
//   BadItemType       its type code is unknown
//   TypeMismatch      it is of another type (the message names both)
//   CountMismatch     its body is malformed (a Boolean byte not 0 or 1), it is
//                     not a run of exactly 1 where one value is asked for, or an
//                     object record does not stream as the requested type
class Unpacker
{
public:
    explicit Unpacker(QByteArray buffer);

    // The next run, which must decode as T (Byte and SignedByte both as qint8,
    // Short and SignedShort both as qint16).
    template<ItemValue T>
    Result<QList<T>> unpack()
    {
        return take<T>({});
    }

    // The next run, which must hold exactly one T.
    template<ItemValue T>
    Result<T> unpackValue()
    {
        auto items = take<T>({Capacity::ExactlyOne});
        if (!items)
            return items.error();
        return items->first();
    }

    // The next run into `out`; returns its item count, which may be less than
    // out.size(). A run longer than `out` is an error, not a partial read.
    template<ItemValue T>
    Result<qsizetype> unpackInto(std::span<T> out)
    {
        const auto items = take<T>({Capacity::AtMost, out.size()});
        if (!items)
            return items.error();
        std::copy(items->cbegin(), items->cend(), out.begin());
        return items->size();
    }

    // A Char run as a string (UTF-16 code units as they were packed).
    Result<QString> unpackString();
    // An UnsignedByte run as bytes.
    Result<QByteArray> unpackBytes();
    // An Object run of one record, its bytes as packed.
    Result<QByteArray> unpackObjectBytes();

    // An Object run of one record, read with QDataStream in the packed stream
    // format. The stream must succeed and consume the record exactly.
    template<typename T>
    Result<T> unpackObject()
    {
        const auto record = nextObject();
        if (!record)
            return record.error();
        T value{};
        QDataStream in(record->bytes);
        setPackedStreamFormat(in);
        in >> value;
        if (auto ok = checkStreamed(in, record->bytes.size()); !ok)
            return ok.error();
        m_position = record->end;
        return value;
    }

    // The next run's type and count, or nullopt if there is no next run or its
    // header is truncated or unknown. The body is checked only by unpacking.
    std::optional<ItemType> peekType() const;
    std::optional<quint32> peekCount() const;
    bool atEnd() const { return m_position >= m_buffer.size(); }
    // Byte offset of the next run in the buffer.
    qsizetype position() const { return m_position; }

private:
    struct Header
    {
        ItemType type;
        quint32 count;
    };
    // A run that passed every check, its body copied out of the buffer.
    struct Run
    {
        ItemType type;
        quint32 count;
        QByteArray body;
        qsizetype end; // position of the run after it
    };
    struct ObjectRecord
    {
        QByteArray bytes;
        qsizetype end;
    };
    // How many items the caller has room for.
    struct Capacity
    {
        enum Kind { Any, ExactlyOne, AtMost } kind = Any;
        std::size_t items = 0;
    };

    // The one place runs are read: header, type, extent, capacity, body. Does
    // not advance; `wanted` names the requested type in TypeMismatch messages.
    Result<Run> nextRun(ItemType wanted, bool (*accepts)(ItemType), Capacity capacity) const;
    Result<Header> readHeader() const;
    Result<qsizetype> bodyEnd(const Header &header) const;
    Result<qsizetype> objectRunEnd(quint32 count) const;
    Result<void> checkCapacity(const Header &header, Capacity capacity) const;
    Result<ObjectRecord> nextObject() const;
    static Result<void> checkStreamed(const QDataStream &in, qsizetype recordSize);

    template<ItemValue T>
    Result<QList<T>> take(Capacity capacity)
    {
        const auto run = nextRun(ItemTraits<T>::type, &itemTypeDecodesAs<T>, capacity);
        if (!run)
            return run.error();
        auto items = decodeItems<T>(run->type, run->count, run->body);
        if (items)
            m_position = run->end;
        return items;
    }

    QByteArray m_buffer;
    qsizetype m_position = 0;
};

} // namespace mmpi
