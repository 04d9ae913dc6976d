#include "fragments.h"

#include <QtEndian>

namespace mmpi::detail {

namespace {

// Bytes [from, from + length) of `whole` without copying them: the slice
// shares whole's allocation and holds a reference to it, so it stays valid in
// the replay buffer and the socket's queue after the message is gone (which
// QByteArray::fromRawData() would not). Writing to it detaches, as to any
// shared QByteArray.
QByteArray sharedSlice(const QByteArray &whole, qsizetype from, qsizetype length)
{
    QByteArray::DataPointer slice = const_cast<QByteArray &>(whole).data_ptr();
    slice.ptr += from;
    slice.size = length;
    return QByteArray(std::move(slice));
}

Frame fragmentHeaderOf(const Frame &message, quint8 flags)
{
    Frame fragment;
    fragment.header = message.header;
    fragment.header.kind = FrameKind::Fragment;
    // Every fragment says the order of the items it carries a slice of.
    fragment.header.flags = flags | (message.header.flags & LittleEndianItems);
    fragment.owner = message.owner; // a slice of a view: its memory's keeper too
    return fragment;
}

} // namespace

Frame fragmentAnnouncement(const Frame &message)
{
    Frame fragment = fragmentHeaderOf(message, FirstFragment);
    fragment.payload = QByteArray(FragmentLengthSize, Qt::Uninitialized);
    qToBigEndian<quint64>(quint64(message.payload.size()), fragment.payload.data());
    return fragment;
}

Frame fragmentOf(const Frame &message, qint64 offset, qint64 length)
{
    const bool last = offset + length == message.payload.size();
    Frame fragment = fragmentHeaderOf(message, last ? LastFragment : 0);
    fragment.payload = sharedSlice(message.payload, qsizetype(offset), qsizetype(length));
    return fragment;
}

} // namespace mmpi::detail
