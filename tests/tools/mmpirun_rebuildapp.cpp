// mmpirun_rebuildapp: a computation with state on every rank that survives
// the death of a device by REBUILD, for tst_mmpirun_ft. Iteration i adds
// (rank + 1) * allreduce((r + 1) * i over all r) to the rank's own total;
// every --every iterations a coordinated checkpoint saves (i, total), and
// PartnerStore copies it to the next rank. When a rank dies, mmpirun
// --respawn starts a replacement that rejoins the world; every member then
// recovers (the replacement from its partner's copy) and goes on from the
// checkpoint. With --dir each process is a new device with a directory of
// its own under it; without, every rank uses its store's default directory
// (AppDataLocation/checkpoints/<world name>/rank-<r>/default), so that a
// replacement on this machine finds its rank's own checkpoints there.
// --victim R --die-at I: the first process in rank R kills itself (SIGKILL)
// once iteration I is done, a failure at a known point of the run. Prints:
//   event=ready rank=R size=N replacement=0|1 dir=D
//   event=failed iteration=I reason=...
//   event=failed recover reason=...   (then FaultTolerance::reconfigure() and again)
//   event=recovered epoch=E iteration=I rank=R held=H  (H: epochs on disk before)
//   event=done iterations=N total=T rank=R     (exit 0)
// Exit 4: a wrong sum; 6: no rebuild within 60 s; 1: other errors.
#include "nodeapp.h"

#include <mmpi/ft/coordinatedcheckpoint.h>
#include <mmpi/ft/faulttolerance.h>
#include <mmpi/ft/partnerstore.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDataStream>
#include <QDir>
#include <QEventLoop>
#include <QTimer>

#include <csignal>

using namespace mmpi;
using mmpi::test::say;

namespace {

struct State
{
    qint64 iteration = 0; // the last one done
    qint64 total = 0;
};

QDataStream &operator<<(QDataStream &out, const State &s) { return out << s.iteration << s.total; }
QDataStream &operator>>(QDataStream &in, State &s) { return in >> s.iteration >> s.total; }

// Until `rebuilds` passes `seen` (true), or 60 s pass (false, said).
bool awaitRebuild(const FaultTolerance &ft, const int &rebuilds, int seen)
{
    QEventLoop loop;
    QObject::connect(&ft, &FaultTolerance::ranksRebuilt, &loop, &QEventLoop::quit);
    QObject::connect(&ft, &FaultTolerance::aborted, &loop, &QEventLoop::quit);
    QTimer::singleShot(60000, &loop, &QEventLoop::quit);
    if (rebuilds == seen)
        loop.exec();
    if (rebuilds > seen)
        return true;
    say(QStringLiteral("event=failed reason=no rebuild within 60 s"));
    return false;
}

std::unique_ptr<PartnerStore> makePartners(const Communicator &comm, CheckpointStore *store)
{
    auto own = comm.dup().wait();
    return own ? std::make_unique<PartnerStore>(*own, store) : nullptr;
}

void pause(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("dir"), QStringLiteral("Where devices keep checkpoints."), QStringLiteral("D")});
    parser.addOption({QStringLiteral("iterations"), QStringLiteral("How many."), QStringLiteral("N"),
                      QStringLiteral("300")});
    parser.addOption({QStringLiteral("every"), QStringLiteral("Checkpoint interval."), QStringLiteral("K"),
                      QStringLiteral("25")});
    parser.addOption({QStringLiteral("pause-ms"), QStringLiteral("Pause after each."), QStringLiteral("MS"),
                      QStringLiteral("5")});
    parser.addOption({QStringLiteral("victim"), QStringLiteral("The rank that dies at --die-at."), QStringLiteral("R"),
                      QStringLiteral("-1")});
    parser.addOption({QStringLiteral("die-at"), QStringLiteral("The iteration after which it dies."),
                      QStringLiteral("I"), QStringLiteral("0")});
    parser.process(app);
    const qint64 iterations = parser.value(QStringLiteral("iterations")).toLongLong();
    const qint64 every = parser.value(QStringLiteral("every")).toLongLong();
    const int pauseMs = parser.value(QStringLiteral("pause-ms")).toInt();
    const int victim = parser.value(QStringLiteral("victim")).toInt();
    const qint64 dieAt = parser.value(QStringLiteral("die-at")).toLongLong();

    World world;
    const auto worldComm = test::joinLaunchedWorld(world);
    if (!worldComm) {
        std::fprintf(stderr, "mmpirun_rebuildapp: %s\n", qPrintable(worldComm.error().toString()));
        return 1;
    }
    const bool replacement = world.config().rejoin;
    State state;
    CheckpointStore store(world);
    if (parser.isSet(QStringLiteral("dir"))) // each process is a new device: a store of its own
        store.setDirectory(QDir(parser.value(QStringLiteral("dir")))
                               .filePath(QStringLiteral("rank%1-pid%2").arg(world.rank()).arg(app.applicationPid())));
    store.setStateObject(&state);
    // At once, not at the first checkpoint: a directory another process
    // holds is this run's failure, and the first line says so.
    if (auto locked = store.lockDirectory(); !locked) {
        std::fprintf(stderr, "mmpirun_rebuildapp: %s\n", qPrintable(locked.error().toString()));
        return 1;
    }

    FaultTolerance ft(&world);
    for (auto failureClass : {World::FailureClass::Normal, World::FailureClass::Range, World::FailureClass::NodeTerm})
        ft.setPolicy(failureClass, Policy::Rebuild);
    int rebuilds = 0;
    QObject::connect(&ft, &FaultTolerance::ranksRebuilt, [&] { ++rebuilds; });
    if (auto ok = ft.protect(*worldComm).wait(); !ok) {
        std::fprintf(stderr, "mmpirun_rebuildapp: %s\n", qPrintable(ok.error().toString()));
        return 1;
    }
    say(QStringLiteral("event=ready rank=%1 size=%2 replacement=%3 dir=%4")
            .arg(world.rank()).arg(world.size()).arg(replacement).arg(store.directory()));

    int handled = 0;
    std::unique_ptr<PartnerStore> partners;
    bool recovering = replacement;
    while (state.iteration < iterations) {
        // A rebuild that finished while this node's last sum still went
        // through (or between two sums) needs the recovery all the same:
        // the others run it on the new communicator now.
        if (rebuilds != handled)
            recovering = true;
        if (recovering) {
            handled = rebuilds;
            const Communicator comm = ft.communicator();
            const qsizetype held = store.epochs().size();
            const auto outcome = QCoro::waitFor(CoordinatedCheckpoint::recover(comm, &store));
            if (outcome.error.isError()) {
                // The way out (docs/guide/fault-tolerance.md#when-recovery-fails):
                // a new agreement, then the recovery again on its communicator.
                say(QStringLiteral("event=failed recover reason=%1").arg(outcome.error.message));
                const ErrorCode code = outcome.error.code;
                if (code == ErrorCode::NoCheckpoint || code == ErrorCode::CheckpointFailed)
                    return 1; // the state is not there: agreeing again brings it no closer
                ft.reconfigure();
                if (!awaitRebuild(ft, rebuilds, handled))
                    return 6;
                continue;
            }
            say(QStringLiteral("event=recovered epoch=%1 iteration=%2 rank=%3 held=%4")
                    .arg(outcome.epoch).arg(state.iteration).arg(comm.rank()).arg(held));
            recovering = false;
            partners.reset();
        }
        const Communicator comm = ft.communicator();
        if (!partners)
            partners = makePartners(comm, &store);
        const qint64 i = state.iteration + 1;
        const auto sum = comm.allreduce((comm.rank() + 1) * i, Op::Sum).wait();
        const qint64 expected = qint64(comm.size()) * (comm.size() + 1) / 2 * i;
        if (sum && *sum != expected) {
            say(QStringLiteral("event=wrong iteration=%1 sum=%2 expected=%3").arg(i).arg(*sum).arg(expected));
            return 4;
        }
        if (sum) {
            state = {i, state.total + (comm.rank() + 1) * *sum};
            if (i % every == 0) {
                const auto taken = QCoro::waitFor(CoordinatedCheckpoint::take(comm, &store));
                if (taken.error.isError())
                    say(QStringLiteral("event=failed checkpoint=%1 reason=%2").arg(i).arg(taken.error.message));
            }
            if (i == dieAt && world.rank() == victim && !replacement) {
                std::fflush(stdout);
                ::raise(SIGKILL); // as a device dies: no goodbye, no destructor, the lock left behind
            }
            pause(pauseMs);
            continue;
        }
        say(QStringLiteral("event=failed iteration=%1 reason=%2").arg(i).arg(sum.error().message));
        if (!awaitRebuild(ft, rebuilds, handled))
            return 6;
        recovering = true;
    }
    say(QStringLiteral("event=done iterations=%1 total=%2 rank=%3")
            .arg(state.iteration).arg(state.total).arg(ft.communicator().rank()));
    world.closeAndWait();
    return 0;
}
