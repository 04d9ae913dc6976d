// What the reduce and allreduce tests share: the built-in reductions both
// run against a serial reference, and the values with ties their MINLOC and
// MAXLOC checks use.
#pragma once

#include "collectivecheck.h"

#include <mmpi/comm/communicator.h>

#include <QTest>

namespace mmpi::test {

enum class Reduction { Reduce, Allreduce };

template<typename T>
QList<T> serialReduce(int n, int count, const ReduceOp<T> &op)
{
    QList<T> acc = itemsOf<T>(0, count);
    for (int r = 1; r < n; ++r) {
        const QList<T> next = itemsOf<T>(r, count);
        for (int i = 0; i < count; ++i)
            acc[i] = op.apply(acc.at(i), next.at(i));
    }
    return acc;
}

// reduce at every root (`which` Reduce) or allreduce of each rank's
// itemsOf(rank, count), against serialReduce(); empty if right.
template<typename T>
QString reduced(const CommWorld &w, Reduction which, Op op, int count)
{
    const int n = w.size();
    const QList<T> expected = serialReduce<T>(n, count, op);
    if (which == Reduction::Allreduce) {
        const QString p = onAll<QList<T>>(w, [&](const Communicator &c, int r) { return c.allreduce(itemsOf<T>(r, count), op); },
                                          [&](int, const QList<T> &v) { return differs(v, expected); });
        return p.isEmpty() ? p : QStringLiteral("allreduce %1, %2 ranks: %3").arg(opName(op)).arg(n).arg(p);
    }
    for (int root = 0; root < n; ++root) {
        const QString p = onAll<QList<T>>(w, [&](const Communicator &c, int r) {
            const QList<T> mine = itemsOf<T>(r, count);
            return c.reduce(std::span<const T>(mine), op, root);
        }, [&](int r, const QList<T> &v) { return differs(v, r == root ? expected : QList<T>{}); });
        if (!p.isEmpty())
            return QStringLiteral("reduce %1, %2 ranks, root %3: %4").arg(opName(op)).arg(n).arg(root).arg(p);
    }
    return {};
}

// Every built-in op on the item types it takes, from no items to a ring's
// segments of unequal counts. A failure returns from here: the caller checks
// QTest::currentTestFailed().
inline void checkBuiltinOps(const CommWorld &w, Reduction which)
{
    for (Op op : {Op::Sum, Op::Prod, Op::Min, Op::Max})
        QCOMPARE(reduced<qint32>(w, which, op, 5), QString());
    QCOMPARE(reduced<double>(w, which, Op::Sum, 0), QString());
    QCOMPARE(reduced<double>(w, which, Op::Max, 3), QString());
    QCOMPARE(reduced<float>(w, which, Op::Min, 2), QString());
    for (Op op : {Op::LogicalAnd, Op::LogicalOr, Op::LogicalXor})
        QCOMPARE(reduced<bool>(w, which, op, 6), QString());
    for (Op op : {Op::BitwiseAnd, Op::BitwiseOr, Op::BitwiseXor})
        QCOMPARE(reduced<quint16>(w, which, op, 4), QString());
    QCOMPARE(reduced<qint8>(w, which, Op::LogicalOr, 3), QString());
    QCOMPARE(reduced<qint64>(w, which, Op::BitwiseXor, 3), QString());
    // 16 KB: still recursive doubling
    QCOMPARE(reduced<double>(w, which, Op::Sum, 2000), QString());
    // Large enough for allreduce to go through reduce + bcast instead of recursive doubling
    QCOMPARE(reduced<double>(w, which, Op::Sum, 10000), QString());
    QCOMPARE(reduced<qint32>(w, which, Op::Min, 20000), QString());
    // ... a ring (commutative op, fixed-size items), segments of unequal counts
    QCOMPARE(reduced<quint16>(w, which, Op::BitwiseXor, 50001), QString());
}

// Rank r's value for MINLOC and MAXLOC: 0, 2, 1, 0, 2, ... (ties: the
// smallest index among equals wins).
inline double tiedValueOf(int rank)
{
    return double((rank * 5) % 3);
}

// The lowest and highest of tiedValueOf() over n ranks, at their first ranks.
struct Extremes
{
    double low = 1e9, high = -1e9;
    qint64 lowAt = -1, highAt = -1;
};

inline Extremes extremesOf(int n)
{
    Extremes e;
    for (int r = 0; r < n; ++r) {
        if (tiedValueOf(r) < e.low)
            e.low = tiedValueOf(r), e.lowAt = r;
        if (tiedValueOf(r) > e.high)
            e.high = tiedValueOf(r), e.highAt = r;
    }
    return e;
}

// Rank r's part of a concatenation (concatenation()), and the whole of n
// ranks' parts in rank order.
inline QString bracketed(int rank)
{
    return QStringLiteral("[%1]").arg(rank);
}

inline QString bracketedRanks(int n)
{
    QString ordered;
    for (int r = 0; r < n; ++r)
        ordered += bracketed(r);
    return ordered;
}

} // namespace mmpi::test
