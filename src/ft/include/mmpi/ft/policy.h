// mmpi::Policy: what the survivors of a communicator do once they agree that
// members failed (docs/guide/fault-tolerance.md#policies-and-agreement), chosen by the
// app per failure class with FaultTolerance::setPolicy().
#pragma once

#include <QObject>

namespace mmpi {

// Own meta-object for Policy, as frame.h does for FrameKind.
inline namespace policies {
Q_NAMESPACE

enum class Policy {
    Blank,   // ranks kept; operations that involve a failed rank fail at once
    Shrink,  // a new communicator of the survivors, ranked contiguously
    Rebuild, // blank until a new node rejoins in the lost rank's place, then whole again
    Abort,   // every node stops with the reason
};
Q_ENUM_NS(Policy)

} // inline namespace policies

} // namespace mmpi
