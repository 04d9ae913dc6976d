// The reductions' building blocks without a world: the combiner of two
// contributions (shared ones left alone, either byte order), the library's
// vectorized kernels against the per-item loop, and integer wrap-around.
#include <mmpi/comm/communicator.h>
#include <mmpi/wire/itemcodec.h>

#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace mmpi;

class TestReduceOps : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void combinerLeavesASharedContributionAlone();
    void libraryKernelsMatchTheItemLoop();
    void contributionsCombineInEitherByteOrder();
    void integerReductionsWrapAround();
};

// A contribution that has been sent is still shared with the copy its link
// keeps for replay: combining it must leave that copy as it was.
void TestReduceOps::combinerLeavesASharedContributionAlone()
{
    using Codec = MessageCodec<QList<qint32>>;
    const detail::Combiner sum = detail::makeCombiner<QList<qint32>>(Op::Sum);
    // Given a shared contribution and one nobody else holds
    const Payload mine = Codec::encode(QList<qint32>{1, 2, -3});
    const Payload kept = mine;
    Payload theirs = Codec::encode(QList<qint32>{10, 20, 30});
    const char *theirBuffer = theirs.bytes.constData();
    // When they are combined
    auto combined = sum.combine(mine, std::move(theirs));
    // Then the result is the sum, written over the unshared one, and the
    // other holder still sees the original
    QVERIFY(combined);
    QCOMPARE(*Codec::decode(*combined), (QList<qint32>{11, 22, 27}));
    QCOMPARE(*Codec::decode(kept), (QList<qint32>{1, 2, -3}));
    QVERIFY(combined->bytes.constData() == theirBuffer); // pointers (QCOMPARE compares C strings)
    // And with both sides shared, neither changes
    const Payload other = Codec::encode(QList<qint32>{4, 4, 4});
    auto apart = sum.combine(mine, other);
    QVERIFY(apart);
    QCOMPARE(*Codec::decode(*apart), (QList<qint32>{5, 6, 1}));
    QCOMPARE(*Codec::decode(mine), (QList<qint32>{1, 2, -3}));
    QCOMPARE(*Codec::decode(other), (QList<qint32>{4, 4, 4}));
    // And a left side nobody else holds is combined where it lies
    Payload alone = Codec::encode(QList<qint32>{5, 6, 7});
    const char *where = alone.bytes.constData();
    auto inPlace = sum.combine(std::move(alone), Codec::encode(QList<qint32>{1, 1, 1}));
    QVERIFY(inPlace);
    QCOMPARE(*Codec::decode(*inPlace), (QList<qint32>{6, 7, 8}));
    QVERIFY(inPlace->bytes.constData() == where); // pointers (QCOMPARE compares C strings)
}

namespace {

// Items with the edge cases of their type among random ones, in wire form.
template<typename E>
QByteArray edgyItems(qsizetype count, quint32 seed)
{
    using Limits = std::numeric_limits<E>;
    QList<E> items;
    QRandomGenerator random(seed);
    QList<E> edges{E(0), E(1), E(-1), Limits::max(), Limits::lowest(), Limits::min()};
    if constexpr (std::is_floating_point_v<E>)
        edges << E(-0.0) << Limits::infinity() << -Limits::infinity() << Limits::quiet_NaN() << Limits::denorm_min();
    for (qsizetype i = 0; i < count; ++i) {
        if (random.bounded(4) == 0)
            items.append(edges.at(random.bounded(int(edges.size()))));
        else if constexpr (std::is_floating_point_v<E>)
            items.append(E((random.generateDouble() - 0.5) * 1e6));
        else
            items.append(E(random.generate64()));
    }
    return encodeItems<E>(std::span<const E>(items.constData(), size_t(items.size())), ItemTraits<E>::type,
                          HostItemOrder);
}

// Equal bits, or both NaN (which NaN an addition of two returns is the CPU's choice).
template<typename E>
bool sameItems(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype at = 0; at < a.size(); at += qsizetype(sizeof(E))) {
        const E x = loadHostItem<E>(a.constData() + at), y = loadHostItem<E>(b.constData() + at);
        bool nan = false;
        if constexpr (std::is_floating_point_v<E>)
            nan = std::isnan(x) && std::isnan(y);
        if (!nan && std::memcmp(a.constData() + at, b.constData() + at, sizeof(E)) != 0)
            return false;
    }
    return true;
}

template<typename E>
void checkKernels()
{
    const QList<Op> ops{Op::Sum, Op::Prod, Op::Min, Op::Max, Op::LogicalAnd, Op::LogicalOr, Op::LogicalXor,
                        Op::BitwiseAnd, Op::BitwiseOr, Op::BitwiseXor};
    for (Op op : ops) {
        if (!ReduceOp<E>(op).check())
            continue;
        // Counts around the vector widths, and a long run.
        for (qsizetype count : {1, 3, 4, 7, 8, 17, 33, 1000}) {
            const QByteArray mine = edgyItems<E>(count, quint32(count) * 7 + quint32(op));
            const QByteArray from = edgyItems<E>(count, quint32(count) * 13 + quint32(op));
            QByteArray expected(mine.size(), Qt::Uninitialized);
            ReduceOp<E>(op).withFunction([&](auto apply) {
                detail::combineItems<E>(expected.data(), mine.constData(), from.constData(), mine.size(), apply);
            });
            QByteArray apart(mine.size(), Qt::Uninitialized);
            QVERIFY(detail::combineBuiltinItems(op, ItemTraits<E>::type, apart.data(), mine.constData(),
                                                from.constData(), mine.size()));
            QVERIFY2(sameItems<E>(apart, expected), qPrintable(opName(op) + u' ' + QString::number(count)));
            QByteArray inPlace = mine;
            inPlace.detach();
            QVERIFY(detail::combineBuiltinItems(op, ItemTraits<E>::type, inPlace.data(), inPlace.constData(),
                                                from.constData(), inPlace.size()));
            QVERIFY2(sameItems<E>(inPlace, expected), qPrintable(opName(op) + QStringLiteral(" in place")));
        }
    }
}

} // namespace

// The library's vectorized reductions give what the per-item loop every
// other type uses gives, item for item: edge values, every count around
// the vector widths, in place and not. Other types and ops are refused.
void TestReduceOps::libraryKernelsMatchTheItemLoop()
{
    checkKernels<qint32>();
    checkKernels<qint64>();
    checkKernels<float>();
    checkKernels<double>();
    char out[2] = {};
    QVERIFY(!detail::combineBuiltinItems(Op::Sum, ItemType::Short, out, out, out, 2));
    QVERIFY(!detail::combineBuiltinItems(Op::BitwiseAnd, ItemType::Double, out, out, out, 0));
}

// A contribution from a host of the other byte order combines with this
// host's: through the combiner and through the caller's last combine, with a
// built-in kernel and with a user's function, the result is right and in
// this host's order, and neither operand shared with a sender is changed.
void TestReduceOps::contributionsCombineInEitherByteOrder()
{
    const QList<double> a{1.5, -2.0, 1e10, 0.0}, b{0.25, 4.0, -1.0, -0.0};
    const QList<double> sums{1.75, 2.0, 1e10 - 1.0, 0.0};
    const auto payload = [](const QList<double> &items, ItemOrder order) {
        return Payload{ItemType::Double, quint32(items.size()),
                       encodeItems<double>(std::span<const double>(items), ItemType::Double, order), order};
    };
    const ReduceOp<double> builtin(Op::Sum);
    const ReduceOp<double> user([](double x, double y) { return x + y; });
    for (const ReduceOp<double> &op : {builtin, user}) {
        for (ItemOrder left : {QSysInfo::BigEndian, QSysInfo::LittleEndian}) {
            for (ItemOrder right : {QSysInfo::BigEndian, QSysInfo::LittleEndian}) {
                const Payload mine = payload(a, left), theirs = payload(b, right);
                const QByteArray mineBefore(mine.bytes.constData(), mine.bytes.size());
                const QByteArray theirsBefore(theirs.bytes.constData(), theirs.bytes.size());
                const auto combined = detail::makeCombiner<QList<double>>(op).combine(mine, theirs);
                QVERIFY(combined);
                QCOMPARE(combined->order, HostItemOrder);
                QCOMPARE(MessageCodec<QList<double>>::decode(*combined).value(), sums);
                QCOMPARE(detail::combineIntoList<double>(op, mine, theirs), sums);
                QCOMPARE(mine.bytes, mineBefore);
                QCOMPARE(theirs.bytes, theirsBefore);
            }
        }
    }
}

// Integer sums and products wrap around as two's complement does, with no
// undefined overflow (UBSan flagged qint32 products before), whatever the
// width: 16-bit items are promoted to int by C++ and would overflow it.
void TestReduceOps::integerReductionsWrapAround()
{
    QCOMPARE(ReduceOp<qint32>(Op::Sum).apply(std::numeric_limits<qint32>::max(), 1),
             std::numeric_limits<qint32>::min());
    QCOMPARE(ReduceOp<qint32>(Op::Prod).apply(-213857280, 165), qint32(quint32(-213857280) * 165u));
    QCOMPARE(ReduceOp<quint16>(Op::Prod).apply(65535, 65535), quint16(1));
    QCOMPARE(ReduceOp<qint16>(Op::Prod).apply(-32768, -1), qint16(-32768));
    QCOMPARE(ReduceOp<qint8>(Op::Sum).apply(127, 1), qint8(-128));
    QCOMPARE(ReduceOp<qint64>(Op::Prod).apply(std::numeric_limits<qint64>::max(), 2), qint64(-2));
    QCOMPARE(ReduceOp<double>(Op::Prod).apply(1.5, -2.0), -3.0);
}

QTEST_GUILESS_MAIN(TestReduceOps)
#include "tst_reduceops.moc"
