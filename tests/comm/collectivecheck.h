// What the collective tests share: a collective started on every rank of an
// in-process world at once (each rank's call waits for the others') and
// checked rank by rank, bounded waits, and payloads that differ by rank and
// index, so that a block delivered to the wrong rank or place shows.
#pragma once

#include "commworld.h"
#include "notelog.h"
#include "patience.h"

#include <mmpi/comm/communicator.h>

#include <QDeadlineTimer>
#include <QDebug>
#include <QThread>

#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace mmpi::test {

// Every collective at each of these sizes, at every root, as Boost.MPI's
// collective tests do: one rank, a pair, odd sizes, a power of two and an
// even size that is none (the trees and pairings of the algorithms differ).
inline const QList<int> CheckedSizes{1, 2, 3, 4, 6, 7};

// The outcome of `op`, or a Cancelled error if it did not finish in time.
// Polls without running this thread's events: the collectives progress on
// the worlds' own threads, and a sleep of Qt's (10 ms) per check would make
// the thousands of small collectives here slow.
template<typename R>
Result<R> within(const Operation<R> &op, int ms = Patience)
{
    QDeadlineTimer deadline(ms);
    while (!op.request().isFinished() && !deadline.hasExpired())
        QThread::usleep(200);
    if (!op.request().isFinished())
        return Error{ErrorCode::Cancelled, QStringLiteral("did not finish within %1 ms").arg(ms)};
    return op.wait();
}

// A receive's request as an operation, for within().
inline Operation<Status> received(const Request &request)
{
    return Operation<Status>(request, [](const Request &r) { return r.wait(); });
}

template<typename R>
using Start = std::function<Operation<R>(const Communicator &, int)>;
template<typename R>
using Check = std::function<QString(int, const R &)>;

// Starts `start(comm, rank)` on every rank, then checks each outcome with
// `check(rank, value)`; returns the first problem (empty: none).
template<typename R>
QString onAll(const CommWorld &w, const Start<R> &start, const Check<R> &check)
{
    std::vector<Operation<R>> ops;
    for (int r = 0; r < w.size(); ++r)
        ops.push_back(start(w[r], r));
    for (int r = 0; r < w.size(); ++r) {
        const auto got = within(ops[size_t(r)]);
        if (!got)
            return QStringLiteral("rank %1: %2").arg(r).arg(got.error().toString());
        if (QString p = check(r, *got); !p.isEmpty())
            return QStringLiteral("rank %1: %2").arg(r).arg(p);
    }
    return {};
}

// onAll() that also counts the blocks read straight into a result list.
template<typename R>
std::pair<QString, int> placedIn(const CommWorld &w, const Start<R> &start, const Check<R> &check)
{
    NoteLog log(QLatin1String("into its result"));
    QString problem = onAll<R>(w, start, check);
    return {problem, log.count()};
}

// Every rank's outcome must be an error with `code` (NoError: any code, but in time).
template<typename R>
QString allFail(const CommWorld &w, const Start<R> &start, ErrorCode code)
{
    std::vector<Operation<R>> ops;
    for (int r = 0; r < w.size(); ++r)
        ops.push_back(start(w[r], r));
    for (int r = 0; r < w.size(); ++r) {
        const auto got = within(ops[size_t(r)]);
        if (got)
            return QStringLiteral("rank %1 succeeded").arg(r);
        if (code == ErrorCode::NoError ? got.error().code == ErrorCode::Cancelled : got.error().code != code)
            return QStringLiteral("rank %1: %2").arg(r).arg(got.error().toString());
    }
    return {};
}

// After failed collectives the communicator still works: a sum of the ranks.
inline QString stillWorks(const CommWorld &w)
{
    const qint32 sum = qint32(w.size() * (w.size() - 1) / 2);
    return onAll<qint32>(w, [](const Communicator &c, int r) { return c.allreduce(qint32(r), Op::Sum); },
                         [sum](int, const qint32 &v) { return v == sum ? QString() : QStringLiteral("sum %1").arg(v); });
}

// A non-commutative user op: concatenation, which shows the order of combining.
inline ReduceOp<QString> concatenation()
{
    return ReduceOp<QString>([](const QString &a, const QString &b) { return a + b; }, Commutativity::NonCommutative);
}

template<typename T>
QString differs(const T &got, const T &expected)
{
    if (got == expected)
        return {};
    QString text;
    QDebug(&text) << "got" << got << "expected" << expected;
    return text;
}

// Rank r's contribution of `count` items of T (distinct per rank and index).
template<typename T>
QList<T> itemsOf(int rank, int count)
{
    QList<T> items;
    for (int i = 0; i < count; ++i) {
        if constexpr (std::is_same_v<T, bool>)
            items.append((rank + i) % 3 == 0);
        else
            items.append(T(rank * 37 + i * 5 - (std::is_signed_v<T> ? 20 : 0)));
    }
    return items;
}

// `size` bytes of rank r's pattern.
inline QByteArray bytesOf(int rank, qsizetype size)
{
    QByteArray b(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        b[i] = char((i * 131 + rank * 7) & 0xff);
    return b;
}

} // namespace mmpi::test
