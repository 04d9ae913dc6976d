#include "bandworker.h"

#include <mmpi/ft/workpool.h>

#include <QCoroTask>

namespace mmpi::demo {

BandWorker::BandWorker(std::optional<Communicator> pool, int manager, QObject *parent)
    : QThread(parent), m_pool(std::move(pool)), m_manager(manager)
{
}

BandWorker::~BandWorker()
{
    stop();
    wait();
}

void BandWorker::enqueue(const Job &job)
{
    QMutexLocker lock(&m_mutex);
    m_jobs.push_back(job);
    m_wake.wakeAll();
}

void BandWorker::cancelUpTo(quint32 generation)
{
    quint32 seen = m_cancelled.load();
    while (seen < generation && !m_cancelled.compare_exchange_weak(seen, generation)) {
    }
}

void BandWorker::stop()
{
    QMutexLocker lock(&m_mutex);
    m_stopping = true;
    m_jobs.clear();
    m_wake.wakeAll();
}

std::optional<BandWorker::Job> BandWorker::next()
{
    QMutexLocker lock(&m_mutex);
    while (!m_stopping && m_jobs.empty())
        m_wake.wait(&m_mutex);
    if (m_stopping)
        return std::nullopt;
    Job job = m_jobs.front();
    m_jobs.pop_front();
    return job;
}

// A cancelled band costs an empty message: the pool still gets an answer
// for every item, so the root's pool finishes and the next one can start.
QByteArray BandWorker::compute(const Job &job, int band) const
{
    if (job.generation <= m_cancelled.load() || band < 0 || band >= bandCount(job.view, job.bandRows))
        return {};
    return timedBand(job.view, job.bandRows, band);
}

void BandWorker::run()
{
    while (const auto job = next()) {
        if (m_pool)
            runPool(*job);
        else
            runLocal(*job);
    }
}

void BandWorker::runPool(const Job &job)
{
    WorkPool pool(nullptr, *m_pool, m_manager);
    pool.setTagBase(job.tagBase);
    // QCoro resumes the task on this thread: its event loop runs in waitFor().
    const auto outcome = QCoro::waitFor(pool.work([this, &job](qint64 band, const QByteArray &) {
        return compute(job, int(band));
    }));
    Q_EMIT jobDone(job.generation, int(outcome.computed), outcome.error.isError() ? outcome.error.message : QString());
}

void BandWorker::runLocal(const Job &job)
{
    const int bands = bandCount(job.view, job.bandRows);
    int computed = 0;
    for (int band = 0; band < bands; ++band) {
        {
            QMutexLocker lock(&m_mutex);
            if (m_stopping)
                return;
        }
        const QByteArray result = compute(job, band);
        computed += result.isEmpty() ? 0 : 1;
        Q_EMIT bandComputed(job.generation, band, result);
    }
    Q_EMIT jobDone(job.generation, computed, QString());
}

} // namespace mmpi::demo
