// How collective frames carry an error: an Abort (a rank gave up on one
// collective) and a Revoke notice (a communicator was revoked) both hold one
// Object record that starts with qint32 code and QString message, in
// QDataStream's Qt 6.4 format; a Revoke follows it with the world ranks told.
#pragma once

#include <mmpi/core/error.h>
#include <mmpi/comm/messagecodec.h>
#include <mmpi/wire/frame.h>

#include <optional>

namespace mmpi::detail {

struct ErrorRecord
{
    Error error;
    QList<int> ranks; // a Revoke's members, empty in an Abort
};

// The frame's payload as one Object item.
Payload encodeErrorRecord(const ErrorRecord &record);
// Nothing if the frame is not one well-formed record with a known error code.
std::optional<ErrorRecord> decodeErrorRecord(const Frame &frame);

} // namespace mmpi::detail
