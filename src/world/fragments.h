// How a Data message larger than the chunk size is cut into Fragment frames:
// first one that announces the length, then slices of the payload that share
// its allocation (never copies). Used by the engine's Outbox.
#pragma once

#include <mmpi/wire/frame.h>

namespace mmpi::detail {

// The first fragment: the message's length alone (a first slice would have to
// be copied behind it here, and on the receiver out of the link's staging
// buffer, since a first fragment is read before the receive's buffer is known).
Frame fragmentAnnouncement(const Frame &message);
// Payload bytes [offset, offset + length) of `message` as a fragment; the one
// that reaches the end is flagged LastFragment.
Frame fragmentOf(const Frame &message, qint64 offset, qint64 length);

} // namespace mmpi::detail
