// BufferPool: large byte buffers kept for reuse across messages. A fresh
// megabyte allocation is mapped anew and page-faults on every page it fills
// (about 15 % of a 1 MiB round trip); a buffer taken again does not.
// Thread-safe and bounded: it keeps at most limit() bytes in a few buffers.
#pragma once

#include <QByteArray>

namespace mmpi {

class BufferPool
{
public:
    // Smaller buffers are left to malloc, which reuses them cheaply anyway.
    static constexpr qsizetype MinimumSize = 64 * 1024;

    // A buffer of `size` bytes with undefined contents: a kept one that
    // fits if there is one, else a new one.
    static QByteArray take(qsizetype size);
    // Keeps `bytes`' allocation for a later take() if it is large and no
    // other QByteArray shares it; otherwise it is simply released.
    static void recycle(QByteArray &&bytes);

    // Bytes kept at most: 16 MiB (4 MiB on Android and iOS) unless the
    // environment variable MMPI_BUFFER_POOL_BYTES says otherwise; 0 keeps
    // nothing. A World that closes or fails empties the pool.
    static qint64 limit();
    static void setLimit(qint64 bytes);
    // Bytes kept right now, and releasing them all.
    static qint64 keptBytes();
    static void clear();

    // `bytes` itself if it has storage of its own; a copy (in a buffer taken
    // here) if it borrows someone else's memory (isBorrowed()): for whoever
    // keeps a payload beyond the call that handed it over.
    static QByteArray owned(QByteArray bytes);
};

// Whether `bytes` views memory it does not own (QByteArray::fromRawData(),
// or a slice of such a view): a sender's items passed without an encoding
// copy, valid only until the call that took them returns.
inline bool isBorrowed(const QByteArray &bytes)
{
    return !bytes.isEmpty() && !const_cast<QByteArray &>(bytes).data_ptr().isMutable();
}

} // namespace mmpi
