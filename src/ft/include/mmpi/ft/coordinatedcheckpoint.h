// mmpi::CoordinatedCheckpoint: a consistent global checkpoint — every member
// of a communicator writes its CheckpointStore at the same epoch, at a cut
// that no message crosses — and the restore that brings every member back to
// the same epoch (docs/guide/checkpoints.md#coordinated-checkpoints).
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/ft/checkpointstore.h>

#include <QCoroTask>

#include <chrono>

namespace mmpi {

class CoordinatedCheckpoint
{
public:
    struct Outcome
    {
        quint64 epoch = 0;  // the epoch every member wrote (or restored)
        Error error;        // NoError on success
        QStringList skipped; // restore: newer checkpoints passed over here
    };

    // Collective over `comm`, at a point where the app expects no message:
    // waits (up to `drainTimeout`) until every message any member sent to
    // another before the call has arrived, fails if one arrived that no
    // receive took (it would be lost on restore), then has every member
    // write `store` at one epoch: one above the newest any of them has. The
    // outcome's error names the rank that failed, on every member
    // (CheckpointInUse when another store holds that member's directory,
    // CheckpointFailed otherwise).
    static QCoro::Task<Outcome> take(Communicator comm, CheckpointStore *store,
                                     std::chrono::milliseconds drainTimeout = std::chrono::seconds(30));
    // Collective: every member restores the newest epoch that all of them
    // hold whole (NoCheckpoint if there is none). Each member's store first
    // takes its directory's lock; a member that cannot fails the restore on
    // every member, naming its rank and why.
    static QCoro::Task<Outcome> restore(Communicator comm, CheckpointStore *store);
    // Collective, after REBUILD (FaultTolerance::ranksRebuilt): a member
    // whose store holds no checkpoint (a new node in a lost rank) first gets
    // the newest copy of its rank's state that another member keeps as its
    // partner (PartnerStore, beside that member's store); then every member
    // restores as restore() does. NoCheckpoint, on every member, when no
    // member holds a copy for a rank that needs one.
    static QCoro::Task<Outcome> recover(Communicator comm, CheckpointStore *store);
};

} // namespace mmpi
