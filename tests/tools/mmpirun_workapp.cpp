// mmpirun_workapp: a WorkPool run for the fault tests under mmpirun. Rank 0
// manages --items items; every other rank computes them (a few ms each).
// The manager checks the results against its own serial computation and
// prints one line:
//   event=done items=N match=yes|no lost=L by-worker=R:N,...   (exit 0, or 4 on a mismatch)
//   event=failed reason=...                                     (exit 1)
// Workers print event=worker-done computed=N (or event=worker-stopped reason=...).
#include "nodeapp.h"

#include <mmpi/ft/workpool.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QEventLoop>
#include <QThread>
#include <QTimer>

#include <cstdio>

using namespace mmpi;
using mmpi::test::say;

namespace {

QByteArray compute(qint64 item, const QByteArray &data)
{
    QByteArray digest = data + QByteArray::number(item);
    for (int i = 0; i < 200; ++i)
        digest = QCryptographicHash::hash(digest, QCryptographicHash::Sha256);
    return digest;
}

int manage(World &world, WorkPool &pool, int count)
{
    QList<QByteArray> items;
    for (int i = 0; i < count; ++i)
        items << QByteArray("tile ") + QByteArray::number(i);
    int lost = 0;
    QObject::connect(&pool, &WorkPool::workerLost, [&](int worker, qint64 reissued) {
        ++lost;
        say(QStringLiteral("event=worker-lost worker=%1 reissued=%2").arg(worker).arg(reissued));
    });
    QEventLoop loop;
    int status = 0;
    QObject::connect(&pool, &WorkPool::finished, &loop, &QEventLoop::quit);
    QObject::connect(&pool, &WorkPool::failed, &loop, [&](const Error &reason) {
        say(QStringLiteral("event=failed reason=%1").arg(reason.message));
        status = 1;
        loop.quit();
    });
    pool.manage(items);
    if (pool.done() < pool.total())
        loop.exec();
    if (status != 0)
        return status;
    bool match = true;
    for (int i = 0; i < count; ++i)
        match = match && pool.results().at(i) == compute(i, items.at(i));
    QStringList byWorker;
    const auto counts = pool.resultsByWorker();
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        byWorker << QStringLiteral("%1:%2").arg(it.key()).arg(it.value());
    byWorker.sort();
    say(QStringLiteral("event=done items=%1 match=%2 lost=%3 by-worker=%4")
            .arg(pool.done())
            .arg(match ? u"yes"_qs : u"no"_qs)
            .arg(lost)
            .arg(byWorker.join(u',')));
    Q_UNUSED(world);
    return match ? 0 : 4;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("items"), QStringLiteral("Work items."), QStringLiteral("N"), QStringLiteral("600")});
    parser.addOption({QStringLiteral("item-ms"), QStringLiteral("Extra time per item."), QStringLiteral("MS"),
                      QStringLiteral("3")});
    parser.process(app);
    World world;
    const auto comm = test::joinLaunchedWorld(world);
    if (!comm) {
        std::fprintf(stderr, "mmpirun_workapp: %s\n", qPrintable(comm.error().toString()));
        return 1;
    }
    WorkPool pool(&world, *comm);
    int status = 0;
    if (pool.isManager()) {
        status = manage(world, pool, parser.value(QStringLiteral("items")).toInt());
    } else {
        const int itemMs = parser.value(QStringLiteral("item-ms")).toInt();
        const auto outcome = QCoro::waitFor(pool.work([itemMs](qint64 item, const QByteArray &data) {
            QThread::msleep(quint64(itemMs));
            return compute(item, data);
        }));
        if (outcome.error.isError()) {
            say(QStringLiteral("event=worker-stopped computed=%1 reason=%2").arg(outcome.computed).arg(outcome.error.message));
            status = 1;
        } else {
            say(QStringLiteral("event=worker-done computed=%1").arg(outcome.computed));
        }
    }
    world.closeAndWait();
    return status;
}
