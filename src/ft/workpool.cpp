#include <mmpi/ft/workpool.h>

#include <mmpi/core/logging.h>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QtEndian>

namespace mmpi {

namespace {

// Items and results travel as the item number (8 bytes, big-endian), then
// the item's or the result's bytes.
QByteArray withNumber(qint64 item, const QByteArray &bytes)
{
    QByteArray message(8, Qt::Uninitialized);
    qToBigEndian<qint64>(item, message.data());
    return message + bytes;
}

std::optional<qint64> numberOf(const QByteArray &message)
{
    if (message.size() < 8)
        return std::nullopt;
    return qFromBigEndian<qint64>(message.constData());
}

} // namespace

WorkPool::WorkPool(World *world, const Communicator &comm, int manager, QObject *parent)
    : QObject(parent), m_world(world), m_comm(comm), m_manager(manager)
{
}

WorkPool::~WorkPool() = default;

// ---------------------------------------------------------------- manager

void WorkPool::manage(QList<QByteArray> items)
{
    if (m_managing || !isManager()) {
        qCWarning(lcFt) << "WorkPool::manage() on rank" << m_comm.rank() << ": only rank" << m_manager
                        << "manages, and only once";
        return;
    }
    m_managing = true;
    m_items = std::move(items);
    m_results = QList<QByteArray>(m_items.size());
    m_haveResult = QList<bool>(m_items.size(), false);
    for (qint64 i = 0; i < m_items.size(); ++i)
        m_pending.push_back(i);
    if (m_world)
        connect(m_world, &World::nodeLost, this, [this](int worldRank) { handleLost(worldRank); });
    m_inbox = std::make_unique<MessageListener>(m_comm, this, QStringLiteral("work pool"),
                                                [this](const Status &status, const Request &request) {
        if (const auto bytes = request.value<QByteArray>(); bytes)
            handle(status.source, status.tag - m_tagBase, *bytes);
        else
            qCWarning(lcFt) << "work pool: ignoring a message of the wrong type from rank" << status.source;
    });
    computeLocally();
    finishIfDone();
}

void WorkPool::handle(int worker, int tag, const QByteArray &bytes)
{
    if (m_lost.contains(worker) || worker == m_manager)
        return;
    if (tag == ResultTag) {
        const auto item = numberOf(bytes);
        if (!item || *item < 0 || *item >= m_items.size()) {
            qCWarning(lcFt) << "work pool: ignoring a malformed result from rank" << worker;
            return;
        }
        acceptResult(worker, *item, bytes.sliced(8));
    } else if (tag != RequestTag) {
        qCWarning(lcFt) << "work pool: ignoring tag" << tag + m_tagBase << "from rank" << worker;
        return;
    }
    serve(worker);
    finishIfDone();
}

void WorkPool::acceptResult(int worker, qint64 item, const QByteArray &result)
{
    m_assigned[worker].remove(item);
    if (m_haveResult.at(item))
        return;
    m_haveResult[item] = true;
    m_results[item] = result;
    ++m_done;
    ++m_byWorker[worker];
    Q_EMIT resultReady(item, worker, m_results.at(item));
    Q_EMIT progressChanged(m_done, total());
}

std::optional<qint64> WorkPool::takePending()
{
    while (!m_pending.empty() && m_haveResult.at(m_pending.front()))
        m_pending.pop_front();
    if (m_pending.empty())
        return std::nullopt;
    const qint64 item = m_pending.front();
    m_pending.pop_front();
    return item;
}

// The next item without a result, Done when there is none left anywhere, or
// wait: an item out with another worker may come back if that one is lost.
void WorkPool::serve(int worker)
{
    if (const auto item = takePending()) {
        m_assigned[worker].insert(*item);
        m_comm.isend(worker, m_tagBase + ItemTag, withNumber(*item, m_items.at(*item)));
    } else if (m_done == total()) {
        m_comm.isend(worker, m_tagBase + DoneTag, QByteArray());
    } else if (!m_idle.contains(worker)) {
        m_idle.append(worker);
    }
}

void WorkPool::serveIdle()
{
    while (!m_idle.isEmpty() && !m_pending.empty())
        serve(m_idle.takeFirst());
    computeLocally();
}

// The watcher is a child: a pool destroyed mid-item never hears of it, and
// the computation, which owns copies of what it uses, just ends.
void WorkPool::computeLocally()
{
    if (!m_localCompute || m_computingLocally || m_finished)
        return;
    const auto item = takePending();
    if (!item)
        return;
    m_computingLocally = true;
    m_assigned[m_manager].insert(*item);
    auto *watcher = new QFutureWatcher<QByteArray>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, item = *item] {
        watcher->deleteLater();
        m_computingLocally = false;
        acceptResult(m_manager, item, watcher->result());
        computeLocally();
        finishIfDone();
    });
    watcher->setFuture(QtConcurrent::run(m_localCompute, *item, m_items.at(*item)));
}

void WorkPool::handleLost(int worldRank)
{
    const int worker = m_comm.rankOfWorldRank(worldRank);
    if (worker == NoRank || worker == m_manager || m_lost.contains(worker))
        return;
    m_lost.insert(worker);
    m_idle.removeAll(worker);
    qint64 reissued = 0;
    for (qint64 item : m_assigned.take(worker)) {
        if (!m_haveResult.at(item)) {
            m_pending.push_front(item);
            ++reissued;
        }
    }
    qCWarning(lcFt) << "work pool: worker" << worker << "was lost;" << reissued << "item(s) go to others";
    Q_EMIT workerLost(worker, reissued);
    serveIdle();
    if (!m_localCompute && m_lost.size() == m_comm.size() - 1 && m_done < total())
        Q_EMIT failed({ErrorCode::NodeLost, QStringLiteral("every worker was lost with %1 of %2 item(s) left")
                                                 .arg(total() - m_done)
                                                 .arg(total())});
}

void WorkPool::finishIfDone()
{
    if (m_finished || m_done < total())
        return;
    m_finished = true;
    for (int worker : std::exchange(m_idle, {}))
        m_comm.isend(worker, m_tagBase + DoneTag, QByteArray());
    Q_EMIT finished();
}

// ---------------------------------------------------------------- worker

QCoro::Task<WorkPool::Outcome> WorkPool::work(Compute compute)
{
    // By value: the coroutine outlives nothing it does not own.
    const Communicator comm = m_comm;
    const int manager = m_manager;
    const int base = m_tagBase;
    qint64 computed = 0;
    if (auto asked = co_await comm.send(manager, base + RequestTag, QByteArray()); !asked)
        co_return Outcome{computed, asked.error()};
    for (;;) {
        const Request next = comm.irecv(manager, AnyTag);
        const auto status = co_await next;
        if (!status)
            co_return Outcome{computed, status.error()};
        if (status->tag == base + DoneTag)
            co_return Outcome{computed, {}};
        const auto message = next.value<QByteArray>();
        const auto item = message ? numberOf(*message) : std::nullopt;
        if (status->tag != base + ItemTag || !item)
            co_return Outcome{computed, Error(ErrorCode::ProtocolViolation,
                                              QStringLiteral("work pool: unexpected message (tag %1) from the manager")
                                                  .arg(status->tag))};
        const QByteArray result = compute(*item, message->sliced(8));
        ++computed;
        if (auto sent = co_await comm.send(manager, base + ResultTag, withNumber(*item, result)); !sent)
            co_return Outcome{computed, sent.error()};
    }
}

} // namespace mmpi
