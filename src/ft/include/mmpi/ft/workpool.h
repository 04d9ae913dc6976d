// mmpi::WorkPool: the manager/worker pattern for computations that must
// survive losing nodes (the MMPI paper's SETI@home-style architecture): the
// manager hands out work items, keeps a copy of every assignment, gives the
// items of a lost worker to others, takes the first result of an item and
// ignores late duplicates (docs/reference/workpool.md).
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>
#include <mmpi/world/world.h>

#include <QCoroTask>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi {

class WorkPool : public QObject
{
    Q_OBJECT
    Q_PROPERTY(qint64 done READ done NOTIFY progressChanged)
    Q_PROPERTY(qint64 total READ total NOTIFY progressChanged)
public:
    // Tags the pool uses on its communicator, from tagBase to tagBase + 3.
    static constexpr int DefaultTagBase = 0x7fff0000;
    // One work item's computation, on a worker: its result's bytes.
    using Compute = std::function<QByteArray(qint64 item, const QByteArray &data)>;

    // `manager` is a rank of `comm`; every other rank is a worker.
    WorkPool(World *world, const Communicator &comm, int manager = 0, QObject *parent = nullptr);
    ~WorkPool() override;
    void setTagBase(int tagBase) { m_tagBase = tagBase; }
    // The manager computes items too, one at a time on a thread of
    // QThreadPool::globalInstance() (so its own thread keeps serving the
    // workers): on a device whose cores the workers do not use, a world of
    // two is then twice as fast as one. Set before manage(); its results
    // count for the manager's rank in resultsByWorker(). With it, losing
    // every worker no longer fails the pool: the manager finishes alone.
    void setLocalCompute(Compute compute) { m_localCompute = std::move(compute); }
    bool isManager() const { return m_comm.rank() == m_manager; }

    // ---- manager (this object's thread runs it; results come as signals)
    // Hand out `items` (their index is the item number) until every one has
    // a result. Returns at once.
    void manage(QList<QByteArray> items);
    qint64 done() const { return m_done; }
    qint64 total() const { return m_items.size(); }
    // Results by item number (empty until done).
    QList<QByteArray> results() const { return m_results; }
    // How many first results each worker delivered, by rank.
    QHash<int, qint64> resultsByWorker() const { return m_byWorker; }

    // ---- worker
    // What work() did: the items this worker computed, and the error that
    // stopped it early (NoError when the manager said all is done).
    struct Outcome
    {
        qint64 computed = 0;
        Error error;
    };
    // Ask for items, compute them, send the results, until the manager says
    // all is done (or is lost).
    QCoro::Task<Outcome> work(Compute compute);

Q_SIGNALS:
    void resultReady(qint64 item, int worker, const QByteArray &result);
    void progressChanged(qint64 done, qint64 total);
    // A worker was lost; its `reissued` unfinished items go to others.
    void workerLost(int worker, qint64 reissued);
    void finished();
    // Every worker was lost with items left: the pool cannot finish.
    void failed(const mmpi::Error &reason);

private:
    enum Tag { RequestTag, ItemTag, DoneTag, ResultTag };
    void handle(int worker, int tag, const QByteArray &bytes);
    void handleLost(int worldRank);
    void serve(int worker);
    void serveIdle();
    // The next item without a result that nobody computes, if any.
    std::optional<qint64> takePending();
    // A first result is kept and reported; a later one for the same item is not.
    void acceptResult(int worker, qint64 item, const QByteArray &result);
    void computeLocally();
    void finishIfDone();

    QPointer<World> m_world;
    Communicator m_comm;
    std::unique_ptr<MessageListener> m_inbox; // the manager's
    int m_manager;
    int m_tagBase = DefaultTagBase;
    // manager
    QList<QByteArray> m_items;
    QList<QByteArray> m_results;
    QList<bool> m_haveResult;
    std::deque<qint64> m_pending;          // not assigned, or taken back from a lost worker
    QHash<int, QSet<qint64>> m_assigned;   // worker -> items it is computing
    QList<int> m_idle;                     // workers waiting for an item
    QSet<int> m_lost;
    QHash<int, qint64> m_byWorker;
    qint64 m_done = 0;
    bool m_managing = false;
    bool m_finished = false;
    Compute m_localCompute;
    bool m_computingLocally = false;
};

} // namespace mmpi
