// The limits of a ChannelGroup: the wait for a peer's ID, the largest message, the
// unmatched traffic a channel may hold before it is not read (PJ holds none), and
// the unwritten bytes its sends may leave before they wait (docs/guide/mp.md).
#pragma once

#include <QtGlobal>

#include <chrono>

namespace mmpi::mp {

struct ChannelGroupOptions
{
    // PJ waits 30 s for the peer's channel group ID; so do we by default. It
    // also bounds the TCP connect of an outgoing channel.
    std::chrono::milliseconds idTimeout{30000};
    // Largest item payload of one message (N × item size); a larger N fails
    // the channel with FrameTooLarge before anything is allocated.
    qint64 maxMessageSize = 64LL * 1024 * 1024;
    // Unmatched messages one channel may hold; when either limit is reached
    // the channel is no longer read (TCP flow control then holds the sender)
    // until a receive takes one. Nothing is dropped.
    int maxQueuedMessages = 1024;
    qint64 maxQueuedBytes = 64LL * 1024 * 1024;
    // Bytes read from a socket at once (and Qt's socket buffer), so a paused
    // channel stops taking bytes from the kernel.
    qint64 readChunkSize = 64 * 1024;
    // Bytes a channel's sends may leave unwritten in MMPI's socket buffer:
    // a message that would take it past this waits (Channel::sendNoWait()
    // stays pending, send() blocks) until the peer has read enough, unless
    // nothing is unwritten (a message larger than the mark goes alone). 4 MiB
    // is Linux's default largest TCP send buffer (net.ipv4.tcp_wmem), so a
    // peer that stops reading costs MMPI about what it costs the kernel.
    qint64 highWaterMark = 4LL * 1024 * 1024;
};

} // namespace mmpi::mp
