// BandWorker: the thread that computes bands, so the GUI thread (and the
// canvas and control messages it serves) never waits for the maths. On a
// worker rank it takes part in the root's work pool, one pool per render;
// on a node alone it computes every band itself and hands them back.
#pragma once

#include "mandelbrot.h"

#include <mmpi/comm/communicator.h>

#include <QMutex>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <optional>

namespace mmpi::demo {

class BandWorker : public QThread
{
    Q_OBJECT
public:
    struct Job
    {
        quint32 generation = 0;
        View view;
        int bandRows = 8;
        int tagBase = 0; // the pool's tags (pool jobs only)
    };

    // With a communicator: jobs are work pools managed by `manager` on it.
    // Without: jobs are computed here, every band handed out by bandComputed().
    explicit BandWorker(std::optional<Communicator> pool, int manager = 0, QObject *parent = nullptr);
    ~BandWorker() override; // stops and joins

    // Queued; run in order.
    void enqueue(const Job &job);
    // Bands of generations up to `generation` that are not yet computed are
    // answered empty at once: a newer view replaced them.
    void cancelUpTo(quint32 generation);
    void stop();

Q_SIGNALS:
    // Local jobs: one band's timedBand() result (empty if cancelled).
    void bandComputed(quint32 generation, int band, const QByteArray &result);
    // The job is over (a pool job: the manager said done, or `error`).
    void jobDone(quint32 generation, int computed, const QString &error);

protected:
    void run() override;

private:
    std::optional<Job> next();
    QByteArray compute(const Job &job, int band) const;
    void runPool(const Job &job);
    void runLocal(const Job &job);

    std::optional<Communicator> m_pool;
    int m_manager;
    QMutex m_mutex;
    QWaitCondition m_wake;
    std::deque<Job> m_jobs;
    bool m_stopping = false;
    std::atomic<quint32> m_cancelled{0};
};

} // namespace mmpi::demo
