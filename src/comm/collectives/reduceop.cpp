#include <mmpi/comm/reduceop.h>

namespace mmpi {

QString opName(Op op)
{
    switch (op) {
    case Op::Sum: return QStringLiteral("Sum");
    case Op::Prod: return QStringLiteral("Prod");
    case Op::Min: return QStringLiteral("Min");
    case Op::Max: return QStringLiteral("Max");
    case Op::LogicalAnd: return QStringLiteral("LogicalAnd");
    case Op::LogicalOr: return QStringLiteral("LogicalOr");
    case Op::LogicalXor: return QStringLiteral("LogicalXor");
    case Op::BitwiseAnd: return QStringLiteral("BitwiseAnd");
    case Op::BitwiseOr: return QStringLiteral("BitwiseOr");
    case Op::BitwiseXor: return QStringLiteral("BitwiseXor");
    case Op::MinLoc: return QStringLiteral("MinLoc");
    case Op::MaxLoc: return QStringLiteral("MaxLoc");
    }
    return QStringLiteral("Op(%1)").arg(int(op));
}

namespace detail {

Error opNotDefined(Op op, const QString &typeName)
{
    return {ErrorCode::TypeMismatch, QStringLiteral("%1 is not defined for %2").arg(opName(op), typeName)};
}

Error combineCountMismatch(qsizetype left, qsizetype right)
{
    return {ErrorCode::CountMismatch,
            QStringLiteral("contributions of %1 and %2 items cannot be combined element by element").arg(left).arg(right)};
}

} // namespace detail

} // namespace mmpi
