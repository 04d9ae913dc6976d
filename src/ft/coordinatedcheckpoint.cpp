#include <mmpi/ft/coordinatedcheckpoint.h>

#include <mmpi/core/logging.h>
#include <mmpi/ft/partnerstore.h>
#include <mmpi/world/world.h>

#include <QCoroTimer>
#include <QElapsedTimer>

namespace mmpi {

namespace {

using Outcome = CoordinatedCheckpoint::Outcome;

// Every member learns whether all succeeded, and the first failure's rank
// and reason: one allreduce of (failed rank or size), then a bcast of why.
// The code is the failed member's when it names something more precise
// than a failed write (another store holds its directory: CheckpointInUse),
// so that every member can tell.
QCoro::Task<Error> agreeOnFailure(Communicator comm, Error local, QString what)
{
    const qint64 mine = local.isError() ? comm.rank() : comm.size();
    const auto first = co_await comm.allreduce(mine, Op::Min);
    if (!first)
        co_return first.error();
    if (*first == comm.size())
        co_return Error{};
    QString reason = local.message;
    const auto told = co_await comm.bcast(reason, int(*first));
    qint64 code = qint64(local.code);
    const auto toldCode = co_await comm.bcast(code, int(*first));
    const bool inUse = toldCode && *toldCode == qint64(ErrorCode::CheckpointInUse);
    co_return Error{inUse ? ErrorCode::CheckpointInUse : ErrorCode::CheckpointFailed,
                    QStringLiteral("%1 failed on rank %2: %3").arg(what, QString::number(*first), told ? *told : local.message)};
}

// Waits until every member's messages sent to this node before the cut
// (`sentToMe`, counted in numbered frames) have arrived.
QCoro::Task<Error> drain(const Communicator &comm, const QList<qint64> &sentToMe, std::chrono::milliseconds timeout)
{
    World *world = comm.world();
    QElapsedTimer clock;
    clock.start();
    for (;;) {
        QStringList missing;
        for (int r = 0; r < comm.size(); ++r) {
            const int peer = comm.worldRank(r);
            if (r == comm.rank() || peer == NoRank)
                continue;
            const auto position = world->streamPosition(peer);
            const quint64 received = position ? position->received : 0;
            if (received < quint64(sentToMe.at(r)))
                missing << QStringLiteral("%1 frame(s) from rank %2").arg(sentToMe.at(r) - qint64(received)).arg(r);
        }
        if (missing.isEmpty())
            co_return Error{};
        if (clock.elapsed() > timeout.count())
            co_return Error{ErrorCode::CheckpointFailed, QStringLiteral("messages still in flight after %1 ms: %2")
                                                              .arg(timeout.count())
                                                              .arg(missing.join(u", "))};
        co_await QCoro::sleepFor(std::chrono::milliseconds(2));
    }
}

// The best copy of `rank`'s state among the members: newest epoch, then
// lowest holder, as one allreduce of epoch << 20 | (2^20 - 1 - holder).
constexpr int HolderBits = 20;

QCoro::Task<Error> handBack(Communicator own, CheckpointStore *store, int rank)
{
    qint64 offer = 0;
    std::optional<PartnerStore::Copy> copy;
    if (own.rank() != rank) {
        if (auto held = PartnerStore::copyOf(*store, own.worldRank(rank)); held && held->epoch > 0) {
            offer = qint64(held->epoch) << HolderBits | ((1 << HolderBits) - 1 - own.rank());
            copy = *held;
        }
    }
    const auto best = co_await own.allreduce(offer, Op::Max);
    if (!best)
        co_return best.error();
    if (*best == 0)
        co_return Error{ErrorCode::NoCheckpoint,
                        QStringLiteral("no member keeps a copy of rank %1's state for its new node").arg(rank)};
    const int holder = (1 << HolderBits) - 1 - int(*best & ((1 << HolderBits) - 1));
    const quint64 epoch = quint64(*best >> HolderBits);
    if (own.rank() == holder) {
        const auto sent = co_await own.send(rank, 0, copy->state);
        co_return sent ? Error{} : sent.error();
    }
    if (own.rank() != rank)
        co_return Error{};
    const auto state = co_await own.recv<QByteArray>(holder, 0);
    if (!state)
        co_return state.error();
    const auto imported = store->importState(epoch, *state);
    if (!imported)
        co_return imported.error();
    qCInfo(lcFt) << "took epoch" << epoch << "of this rank's state (" << state->size() << "bytes) from rank" << holder;
    co_return Error{};
}

} // namespace

QCoro::Task<Outcome> CoordinatedCheckpoint::take(Communicator comm, CheckpointStore *store,
                                                 std::chrono::milliseconds drainTimeout)
{
    World *world = comm.world();
    if (!world || comm.isNull())
        co_return Outcome{0, {ErrorCode::NotFormed, QStringLiteral("coordinated checkpoint on a null communicator")}, {}};
    // 1. The cut: what this node has sent each member so far.
    QList<qint64> sentTo;
    for (int r = 0; r < comm.size(); ++r) {
        const auto position = r == comm.rank() ? std::nullopt : world->streamPosition(comm.worldRank(r));
        sentTo << qint64(position ? position->sent : 0);
    }
    const auto sentToMe = co_await comm.alltoall(std::span<const qint64>(sentTo));
    if (!sentToMe)
        co_return Outcome{0, sentToMe.error(), {}};
    // 2. Everything sent before the cut has arrived, and (after the barrier,
    // which comes behind it on every link) has been handled.
    Error local = co_await drain(comm, *sentToMe, drainTimeout);
    const auto passed = co_await comm.barrier();
    if (!passed)
        co_return Outcome{0, passed.error(), {}};
    if (!local.isError() && comm.unexpectedMessages() > 0)
        local = {ErrorCode::CheckpointFailed,
                 QStringLiteral("%1 message(s) arrived that no receive has taken; they would be lost on restore: "
                                "take them before a coordinated checkpoint")
                     .arg(comm.unexpectedMessages())};
    const Error cut = co_await agreeOnFailure(comm, local, QStringLiteral("the cut"));
    if (cut.isError())
        co_return Outcome{0, cut, {}};
    // 3. One epoch for all: above the newest any member has.
    const QList<quint64> epochs = store->epochs();
    const auto newest = co_await comm.allreduce(qint64(epochs.isEmpty() ? 0 : epochs.last()), Op::Max);
    if (!newest)
        co_return Outcome{0, newest.error(), {}};
    const quint64 epoch = quint64(*newest) + 1;
    const auto written = store->checkpoint(epoch);
    // Plain locals, not expressions, in the co_await: GCC 12 mishandles a
    // conditional's temporary in a coroutine call's arguments.
    const Error writeError = written ? Error{} : written.error();
    const QString what = QStringLiteral("the checkpoint of epoch %1").arg(epoch);
    const Error write = co_await agreeOnFailure(comm, writeError, what);
    if (write.isError())
        co_return Outcome{epoch, write, {}};
    qCInfo(lcFt) << "coordinated checkpoint of epoch" << epoch << "on" << comm.size() << "rank(s)";
    co_return Outcome{epoch, {}, {}};
}

// The newest epoch all hold whole: each restores the newest it has at most
// the current candidate; the smallest of those is the next candidate, until
// all agree. Each round only moves down, so it ends.
QCoro::Task<Outcome> CoordinatedCheckpoint::restore(Communicator comm, CheckpointStore *store)
{
    // A member whose directory another store holds would find no epoch, and
    // every member would hear "no epoch" instead of why.
    const auto locked = store->lockDirectory();
    const Error lockError = locked ? Error{} : locked.error();
    const Error refused = co_await agreeOnFailure(comm, lockError, QStringLiteral("the restore"));
    if (refused.isError())
        co_return Outcome{0, refused, {}};
    qint64 candidate = std::numeric_limits<qint64>::max();
    QStringList skipped; // over all rounds: a later one looks at older epochs only
    for (;;) {
        const auto restored = store->restore(quint64(candidate));
        const qint64 mine = restored ? qint64(restored->epoch) : 0;
        for (const QString &line : restored ? restored->skipped : QStringList())
            if (!skipped.contains(line))
                skipped << line;
        const auto lowest = co_await comm.allreduce(mine, Op::Min);
        if (!lowest)
            co_return Outcome{0, lowest.error(), {}};
        if (*lowest == 0)
            co_return Outcome{0, {ErrorCode::NoCheckpoint, QStringLiteral("no epoch that every rank holds whole")}, {}};
        const auto agreed = co_await comm.allreduce(mine, Op::Max);
        if (!agreed)
            co_return Outcome{0, agreed.error(), {}};
        if (*agreed == *lowest)
            co_return Outcome{quint64(mine), {}, skipped};
        candidate = *lowest;
    }
}

QCoro::Task<Outcome> CoordinatedCheckpoint::recover(Communicator comm, CheckpointStore *store)
{
    // A communicator of its own: the copies must not meet the app's messages.
    const auto own = co_await comm.dup();
    if (!own)
        co_return Outcome{0, own.error(), {}};
    const qint64 lacking = store->epochs().isEmpty() ? 1 : 0;
    const auto needs = co_await own->allgather(lacking);
    if (!needs)
        co_return Outcome{0, needs.error(), {}};
    for (int rank = 0; rank < own->size(); ++rank) {
        if (needs->at(rank) == 0)
            continue;
        const Error local = co_await handBack(*own, store, rank);
        const QString what = QStringLiteral("handing rank %1 its state").arg(rank);
        const Error handed = co_await agreeOnFailure(*own, local, what);
        if (handed.isError()) {
            const Error reason{local.code == ErrorCode::NoCheckpoint ? ErrorCode::NoCheckpoint : handed.code,
                               handed.message};
            co_return Outcome{0, reason, {}};
        }
    }
    co_return co_await restore(comm, store);
}

} // namespace mmpi
