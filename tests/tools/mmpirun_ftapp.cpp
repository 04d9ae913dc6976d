// mmpirun_ftapp: a computation that survives the loss of nodes, for the
// fault tests under mmpirun. Every iteration i sums (rank + 1) * i over the
// communicator (an allreduce over FaultTolerance::survivors(), which leaves
// BLANK ranks out) and checks the result. When a node is lost the collective fails, FaultTolerance
// applies --policy, and the survivors resume from the last iteration all of
// them finished. Prints, one line each:
//   event=ready rank=R size=N
//   event=failed iteration=I reason=...
//   event=reconfigured policy=P failed=RANKS size=N rank=R
//   event=done iterations=N size=S rank=R blank=RANKS    (exit 0)
//   event=aborted reason=...                             (exit 5)
// Exit 4: a wrong sum; 6: no reconfiguration within 30 s; 1: other errors.
#include "nodeapp.h"

#include <mmpi/ft/faulttolerance.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QEventLoop>
#include <QThread>
#include <QTimer>

#include <cstdio>

using namespace mmpi;
using mmpi::test::say;

namespace {

QString list(const QList<int> &ranks)
{
    QStringList parts;
    for (int r : ranks)
        parts << QString::number(r);
    return parts.isEmpty() ? QStringLiteral("-") : parts.join(u',');
}

enum class Combine { Sum, Min };

// The sum or minimum of `value` over the members of `comm` that are not
// blank: an allreduce over the survivors' communicator, which every survivor
// made from the agreed decision (no exchange of the app's own). A failure
// while it runs fails it on every survivor (lost, or Reconfigured).
Result<qint64> combine(const FaultTolerance &ft, qint64 value, Combine how)
{
    return ft.survivors().allreduce(value, how == Combine::Sum ? Op::Sum : Op::Min).wait();
}

qint64 expectedSum(const FaultTolerance &ft, qint64 iteration)
{
    const QList<int> blank = ft.blankRanks();
    qint64 sum = 0;
    for (int r = 0; r < ft.communicator().size(); ++r)
        if (!blank.contains(r))
            sum += (r + 1) * iteration;
    return sum;
}

// Runs the event loop until FaultTolerance applies its policy (true), or
// aborts or takes more than 30 s (false, with `status` set).
bool awaitReconfiguration(FaultTolerance &ft, int &status)
{
    QEventLoop loop;
    bool reconfigured = false;
    QObject::connect(&ft, &FaultTolerance::worldReconfigured, &loop, [&] {
        reconfigured = true;
        loop.quit();
    });
    QObject::connect(&ft, &FaultTolerance::aborted, &loop, &QEventLoop::quit);
    QTimer::singleShot(30000, &loop, &QEventLoop::quit);
    if (status == 0)
        loop.exec();
    if (!reconfigured && status == 0)
        status = 6;
    return reconfigured;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("policy"), QStringLiteral("shrink, blank or abort"), QStringLiteral("P")});
    parser.addOption({QStringLiteral("iterations"), QStringLiteral("How many sums."), QStringLiteral("N"),
                      QStringLiteral("60")});
    parser.addOption({QStringLiteral("pause-ms"), QStringLiteral("Pause after each."), QStringLiteral("MS"),
                      QStringLiteral("50")});
    parser.process(app);
    const QString name = parser.value(QStringLiteral("policy"));
    const Policy policy = name == u"blank"_qs ? Policy::Blank : name == u"abort"_qs ? Policy::Abort : Policy::Shrink;
    const qint64 iterations = parser.value(QStringLiteral("iterations")).toLongLong();
    const int pauseMs = parser.value(QStringLiteral("pause-ms")).toInt();

    World world;
    const auto comm = test::joinLaunchedWorld(world);
    if (!comm) {
        std::fprintf(stderr, "mmpirun_ftapp: %s\n", qPrintable(comm.error().toString()));
        return 1;
    }
    FaultTolerance ft(&world);
    for (auto failureClass : {World::FailureClass::Normal, World::FailureClass::Range, World::FailureClass::NodeTerm})
        ft.setPolicy(failureClass, policy);
    if (auto ok = ft.protect(*comm).wait(); !ok) {
        std::fprintf(stderr, "mmpirun_ftapp: %s\n", qPrintable(ok.error().toString()));
        return 1;
    }
    int reconfigurations = 0;
    int status = 0;
    QObject::connect(&ft, &FaultTolerance::aborted, [&](const Error &reason) {
        say(QStringLiteral("event=aborted reason=%1").arg(reason.message));
        status = 5;
    });
    // Whatever ends the run, the close finishes first: the agreement's
    // decision this node sent goes out with it.
    const auto finish = [&world](int code) {
        world.closeAndWait();
        return code;
    };
    QObject::connect(&ft, &FaultTolerance::worldReconfigured, [&](Policy p, const QList<int> &failed) {
        ++reconfigurations;
        say(QStringLiteral("event=reconfigured policy=%1 failed=%2 size=%3 rank=%4")
                .arg(QVariant::fromValue(p).toString(), list(failed))
                .arg(ft.communicator().size())
                .arg(ft.communicator().rank()));
    });
    say(QStringLiteral("event=ready rank=%1 size=%2").arg(world.rank()).arg(world.size()));

    int handled = 0;
    qint64 done = 0;
    for (qint64 i = 1; i <= iterations;) {
        if (status != 0)
            return finish(status);
        if (handled != reconfigurations) {
            // After every reconfiguration all survivors, whether their last
            // sum failed or not, resume from the last one all finished.
            handled = reconfigurations;
            auto resume = combine(ft, done, Combine::Min);
            if (!resume) {
                say(QStringLiteral("event=failed resume reason=%1").arg(resume.error().message));
                if (!awaitReconfiguration(ft, status))
                    return finish(status);
                continue;
            }
            i = *resume + 1;
        }
        auto sum = combine(ft, (ft.communicator().rank() + 1) * i, Combine::Sum);
        if (!sum) {
            say(QStringLiteral("event=failed iteration=%1 reason=%2").arg(i).arg(sum.error().message));
            if (handled == reconfigurations && !awaitReconfiguration(ft, status))
                return finish(status);
            continue;
        }
        if (*sum != expectedSum(ft, i)) {
            say(QStringLiteral("event=wrong iteration=%1 sum=%2 expected=%3").arg(i).arg(*sum).arg(expectedSum(ft, i)));
            return 4;
        }
        done = i++;
        // Let signals (a loss, the agreement) through between iterations.
        QEventLoop pause;
        QTimer::singleShot(pauseMs, &pause, &QEventLoop::quit);
        QObject::connect(&ft, &FaultTolerance::aborted, &pause, &QEventLoop::quit);
        pause.exec();
    }
    say(QStringLiteral("event=done iterations=%1 size=%2 rank=%3 blank=%4")
            .arg(done)
            .arg(ft.communicator().size())
            .arg(ft.communicator().rank())
            .arg(list(ft.blankRanks())));
    world.closeAndWait();
    return 0;
}
