// ReduceOp<E>: how reduce() and allreduce() combine two contributions: a
// built-in Op (MPI's predefined operations) or a user function, commutative or
// not. Lists combine element by element; a non-commutative op is applied in
// rank order, (x0 op x1) op x2 ... MinLoc/MaxLoc work on ValueIndex<V> pairs.
#pragma once

#include <mmpi/comm/collectiveresult.h>
#include <mmpi/comm/messagecodec.h>

#include <QDataStream>

#include <cstring>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

namespace mmpi {

enum class Op {
    Sum,
    Prod,
    Min,
    Max,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    MinLoc, // on ValueIndex<V>: the smallest value, and the smallest index among equals
    MaxLoc, // on ValueIndex<V>: the largest value, and the smallest index among equals
};

QString opName(Op op);

enum class Commutativity { Commutative, NonCommutative };

// A value with the index it came from (usually the contributing rank), for
// MinLoc/MaxLoc. Travels as one Object record (QDataStream: value, then index
// as qint64); a QList<ValueIndex<V>> reduces element by element.
template<typename V>
struct ValueIndex
{
    V value{};
    qint64 index = 0;
    bool operator==(const ValueIndex &) const = default;
};

template<typename V>
QDataStream &operator<<(QDataStream &s, const ValueIndex<V> &p)
{
    return s << p.value << p.index;
}
template<typename V>
QDataStream &operator>>(QDataStream &s, ValueIndex<V> &p)
{
    return s >> p.value >> p.index;
}

namespace detail {

template<typename T> struct IsSpan : std::false_type {};
template<typename V> struct IsSpan<std::span<V>> : std::true_type {};
// A value handed to a collective as a whole (spans have overloads of their own).
template<typename T>
concept WholeValue = !IsSpan<T>::value;

template<typename T> struct IsValueIndex : std::false_type {};
template<typename V> struct IsValueIndex<ValueIndex<V>> : std::true_type {};

// What an op combines for a value of type T: the items of an item list, the
// pairs of a ValueIndex list, else the value itself.
template<typename T> struct ElementOfImpl { using type = T; };
template<ItemValue V> struct ElementOfImpl<QList<V>> { using type = V; };
template<ItemValue V> struct ElementOfImpl<std::span<const V>> { using type = V; };
template<typename V> struct ElementOfImpl<QList<ValueIndex<V>>> { using type = ValueIndex<V>; };

Error opNotDefined(Op op, const QString &typeName);

template<typename E>
QString elementName()
{
    if constexpr (ItemValue<E>)
        return itemTypeName(ItemTraits<E>::type);
    else if constexpr (IsValueIndex<E>::value)
        return QStringLiteral("ValueIndex pairs");
    else
        return QString::fromLatin1(QMetaType::fromType<E>().name());
}

} // namespace detail

template<typename T>
using ElementOf = typename detail::ElementOfImpl<T>::type;

template<typename E>
class ReduceOp
{
public:
    using Function = std::function<E(const E &, const E &)>;

    ReduceOp(Op op) : m_builtin(op) {} // NOLINT: implicit, reduce(x, Op::Sum, 0)
    template<typename F>
        requires std::is_invocable_r_v<E, F, const E &, const E &>
    ReduceOp(F f, Commutativity commutativity = Commutativity::Commutative) // NOLINT: implicit from a lambda
        : m_user(std::move(f)), m_commutative(commutativity == Commutativity::Commutative)
    {
    }

    bool isCommutative() const { return m_builtin || m_commutative; }
    std::optional<Op> builtin() const { return m_builtin; }
    QString name() const { return m_builtin ? opName(*m_builtin) : QStringLiteral("a user op"); }

    // Whether the op can combine E at all (built-ins are defined for some types only).
    Result<void> check() const
    {
        if (!m_builtin || supports(*m_builtin))
            return success();
        return detail::opNotDefined(*m_builtin, detail::elementName<E>());
    }

    // left op right; left holds the lower ranks' contributions.
    E apply(const E &left, const E &right) const
    {
        if (m_user)
            return m_user(left, right);
        return applyBuiltin(*m_builtin, left, right);
    }

    // Calls run(f) with f a function object (E, E) -> E doing what apply()
    // does, but whose type names the built-in op: a loop over many items
    // built around it has the op compiled in instead of choosing it per item.
    template<typename Run>
    void withFunction(Run &&run) const
    {
        if (m_user)
            return run([this](const E &left, const E &right) { return m_user(left, right); });
        switch (*m_builtin) {
        case Op::Sum: return run(Builtin<Op::Sum>());
        case Op::Prod: return run(Builtin<Op::Prod>());
        case Op::Min: return run(Builtin<Op::Min>());
        case Op::Max: return run(Builtin<Op::Max>());
        case Op::LogicalAnd: return run(Builtin<Op::LogicalAnd>());
        case Op::LogicalOr: return run(Builtin<Op::LogicalOr>());
        case Op::LogicalXor: return run(Builtin<Op::LogicalXor>());
        case Op::BitwiseAnd: return run(Builtin<Op::BitwiseAnd>());
        case Op::BitwiseOr: return run(Builtin<Op::BitwiseOr>());
        case Op::BitwiseXor: return run(Builtin<Op::BitwiseXor>());
        case Op::MinLoc: return run(Builtin<Op::MinLoc>());
        case Op::MaxLoc: return run(Builtin<Op::MaxLoc>());
        }
    }

private:
    template<Op O>
    struct Builtin
    {
        E operator()(const E &left, const E &right) const { return applyBuiltin(O, left, right); }
    };

    static constexpr bool supports(Op op)
    {
        constexpr bool isBool = std::is_same_v<E, bool>;
        constexpr bool isChar = std::is_same_v<E, char16_t>;
        constexpr bool arithmetic = std::is_arithmetic_v<E> && !isBool && !isChar;
        constexpr bool integral = std::is_integral_v<E> && !isChar;
        switch (op) {
        case Op::Sum:
        case Op::Prod:
            return arithmetic;
        case Op::Min:
        case Op::Max:
            return arithmetic || isChar;
        case Op::LogicalAnd:
        case Op::LogicalOr:
        case Op::LogicalXor:
            return integral;
        case Op::BitwiseAnd:
        case Op::BitwiseOr:
        case Op::BitwiseXor:
            return integral && !isBool;
        case Op::MinLoc:
        case Op::MaxLoc:
            if constexpr (detail::IsValueIndex<E>::value)
                return std::is_arithmetic_v<decltype(E::value)> && !std::is_same_v<decltype(E::value), bool>;
            return false;
        }
        return false;
    }

    // Integer sums and products wrap around (two's complement) instead of
    // overflowing, which C++ leaves undefined for signed types and for
    // small unsigned ones promoted to int: computed unsigned, at least as
    // wide as unsigned int.
    template<typename I>
    using Wrapping = std::conditional_t<(sizeof(I) < sizeof(unsigned)), unsigned, std::make_unsigned_t<I>>;

    static E applyBuiltin(Op op, const E &a, const E &b)
    {
        if constexpr (detail::IsValueIndex<E>::value) {
            // Ties go to the smaller index, whichever side it is on (MPI).
            const bool takeB = op == Op::MinLoc ? (b.value < a.value || (b.value == a.value && b.index < a.index))
                                                : (a.value < b.value || (b.value == a.value && b.index < a.index));
            return takeB ? b : a;
        } else if constexpr (std::is_arithmetic_v<E>) {
            switch (op) {
            case Op::Sum:
                if constexpr (std::is_integral_v<E> && !std::is_same_v<E, bool>)
                    return E(Wrapping<E>(a) + Wrapping<E>(b));
                else if constexpr (!std::is_same_v<E, bool>)
                    return E(a + b);
                break;
            case Op::Prod:
                if constexpr (std::is_integral_v<E> && !std::is_same_v<E, bool>)
                    return E(Wrapping<E>(a) * Wrapping<E>(b));
                else if constexpr (!std::is_same_v<E, bool>)
                    return E(a * b);
                break;
            case Op::Min:
                return b < a ? b : a;
            case Op::Max:
                return a < b ? b : a;
            case Op::LogicalAnd:
                return E(bool(a) && bool(b));
            case Op::LogicalOr:
                return E(bool(a) || bool(b));
            case Op::LogicalXor:
                return E(bool(a) != bool(b));
            case Op::BitwiseAnd:
                if constexpr (std::is_integral_v<E> && !std::is_same_v<E, bool>)
                    return E(a & b);
                break;
            case Op::BitwiseOr:
                if constexpr (std::is_integral_v<E> && !std::is_same_v<E, bool>)
                    return E(a | b);
                break;
            case Op::BitwiseXor:
                if constexpr (std::is_integral_v<E> && !std::is_same_v<E, bool>)
                    return E(a ^ b);
                break;
            case Op::MinLoc:
            case Op::MaxLoc:
                break;
            }
        }
        return a; // unreachable: check() refused the combination
    }

    std::optional<Op> m_builtin;
    Function m_user;
    bool m_commutative = true;
};

namespace detail {

// A type-erased op over encoded contributions, run where two of them meet
// (on the progress thread). `context` names the contributions in errors.
struct Combiner
{
    // Both by value: the result is written over left, or else over right,
    // whichever no one else shares (a contribution already sent stays in the
    // replay buffer), so that no new buffer is needed.
    std::function<Result<Payload>(Payload left, Payload right)> combine;
    // Whether combine() would accept these two (types, sizes, counts).
    std::function<Result<void>(const Payload &left, const Payload &right)> check;
    bool commutative = true;
    // The wire size of one item when items have a fixed size (they can then
    // be combined in runs, e.g. a ring allreduce's segments); 0 otherwise.
    qsizetype itemBytes = 0;
    // Set by an allreduce of a list of items, whose caller decodes the result
    // itself: the last combine (or a ring's assembly) is then left to it, so
    // that the result is written once, into its list (CollectiveResult::operand,
    // combineIntoList()) instead of into a payload that is then copied again.
    bool lastCombineToCaller = false;
    // Set with lastCombineToCaller for lists of items whose memory is their
    // wire form: a new list of `count` items that a peer's contribution may
    // be written into as it arrives (the result then stays there:
    // CollectiveResult::list), and the combine of raw host-order runs that
    // finishes it in place (to may be mine or from).
    std::function<ListPlace(quint32 count)> newList;
    std::function<void(char *to, const char *mine, const char *from, qsizetype bytes)> combineBytes;
};


Error combineCountMismatch(qsizetype left, qsizetype right);

// to[i] = apply(mine[i], from[i]) over `bytes` bytes of items in the host's
// byte order (to may be mine or from). The pointers are parameters (not
// captures) so that the loop keeps them in registers: a store through
// char * may alias anything in memory.
template<ItemValue E, typename F>
void combineItems(char *to, const char *mine, const char *from, qsizetype bytes, F apply)
{
    constexpr qsizetype size = qsizetype(std::is_same_v<E, bool> ? 1 : sizeof(E));
    // Item i depends on item i only (to may be mine): no loop-carried
    // dependence, so the loop may run several items at once.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
    for (qsizetype at = 0; at < bytes; at += size) {
        const E value = apply(loadHostItem<E>(mine + at), loadHostItem<E>(from + at));
        storeHostItem<E>(to + at, value);
    }
}

// combineItems() with built-in `op` for items of `type`, compiled in the
// library for the vector units of the CPU at hand (32- and 64-bit integers
// and floats); false, with nothing written, for other ops and types.
bool combineBuiltinItems(Op op, ItemType type, char *to, const char *mine, const char *from, qsizetype bytes);

// The checks of a combine of items E (T: E alone or a list of them).
template<typename T, ItemValue E>
Result<void> checkItemOperands(const Payload &left, const Payload &right)
{
    constexpr qsizetype size = qsizetype(std::is_same_v<E, bool> ? 1 : sizeof(E));
    for (const Payload *p : {&left, &right}) {
        if (!itemTypeDecodesAs<E>(p->itemType) || p->bytes.size() != qsizetype(p->count) * size)
            return MessageCodec<T>::decode(*p).error();
    }
    if constexpr (std::is_same_v<E, T>) {
        if (left.count != 1 || right.count != 1)
            return MessageCodec<T>::decode(left.count != 1 ? left : right).error();
    }
    if (left.count != right.count)
        return combineCountMismatch(left.count, right.count);
    return success();
}

template<ItemValue E>
void combineRun(const ReduceOp<E> &op, char *to, const char *mine, const char *from, qsizetype bytes)
{
    if (bytes > 0 && (!op.builtin() || !combineBuiltinItems(*op.builtin(), ItemTraits<E>::type, to, mine, from, bytes)))
        op.withFunction([&](auto apply) { combineItems<E>(to, mine, from, bytes, apply); });
}

// left op right, checked with checkItemOperands(), written once into a new
// list: the last combine of an allreduce, by its caller.
template<ItemValue E>
QList<E> combineIntoList(const ReduceOp<E> &op, const Payload &left, const Payload &right)
{
    // Items in another order (sent by a host of the other one) first come
    // into this host's order; items sent by a host like this one are as is.
    const Payload mine = inHostOrder(left), theirs = inHostOrder(right);
    QList<E> out = uninitializedList<E>(qsizetype(left.count));
    combineRun<E>(op, reinterpret_cast<char *>(out.data()), mine.bytes.constData(), theirs.bytes.constData(),
                  mine.bytes.size());
    return out;
}

template<typename T>
Combiner makeCombiner(ReduceOp<ElementOf<T>> op)
{
    using E = ElementOf<T>;
    Combiner c;
    c.commutative = op.isCommutative();
    if constexpr (ItemValue<E>) {
        c.itemBytes = qsizetype(std::is_same_v<E, bool> ? 1 : sizeof(E));
        c.check = &checkItemOperands<T, E>;
        c.combineBytes = [op](char *to, const char *mine, const char *from, qsizetype bytes) {
            combineRun<E>(op, to, mine, from, bytes);
        };
        // Items combine as they are, in place: one pass, no lists; in the
        // host's order, which is what both sides have unless a host of the
        // other order sent one of them.
        c.combine = [op = std::move(op)](Payload left, Payload right) -> Result<Payload> {
            if (auto ok = checkItemOperands<T, E>(left, right); !ok)
                return ok.error();
            left = inHostOrder(std::move(left));
            right = inHostOrder(std::move(right));
            const qsizetype bytes = left.bytes.size();
            if (bytes == 0)
                return left;
            // Item i of the result needs item i of each side only, so it may
            // go over either side; a new buffer only when both are shared.
            const char *mine = left.bytes.constData();
            const char *from = right.bytes.constData();
            QByteArray fresh;
            char *to = nullptr;
            if (left.bytes.isDetached())
                to = left.bytes.data();
            else if (right.bytes.isDetached())
                to = right.bytes.data();
            else
                to = (fresh = QByteArray(bytes, Qt::Uninitialized)).data();
            combineRun<E>(op, to, mine, from, bytes);
            if (to == from)
                left.bytes = std::move(right.bytes);
            else if (!fresh.isNull())
                left.bytes = std::move(fresh);
            return left;
        };
        return c;
    }
    c.combine = [op = std::move(op)](Payload left, Payload right) -> Result<Payload> {
        auto a = MessageCodec<T>::decode(left);
        if (!a)
            return a.error();
        auto b = MessageCodec<T>::decode(right);
        if (!b)
            return b.error();
        if constexpr (std::is_same_v<E, T>) {
            return MessageCodec<T>::encode(op.apply(*a, *b));
        } else {
            if (a->size() != b->size())
                return combineCountMismatch(a->size(), b->size());
            for (qsizetype i = 0; i < a->size(); ++i)
                (*a)[i] = op.apply(a->at(i), b->at(i));
            return MessageCodec<T>::encode(*a);
        }
    };
    return c;
}

} // namespace detail

} // namespace mmpi
