#include "simfault.h"

#include <mmpi/core/duration.h>

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <iterator>

namespace mmpi {

namespace {

struct KindName
{
    const char *name;
    SimFault::Kind kind;
};

constexpr KindName kindNames[] = {
    {"io-error", SimFault::Kind::IoError},
    {"out-of-range", SimFault::Kind::OutOfRange},
    {"terminates", SimFault::Kind::Terminates},
};

} // namespace

QString SimFault::grammar()
{
    return QStringLiteral("rank <R> io-error at <time> | rank <R> out-of-range at <time> for <time> | "
                          "rank <R> terminates at <time>, times like 3s, 1.5s or 250ms");
}

Result<SimFault> SimFault::parse(const QString &text)
{
    const auto bad = [&](const QString &reason) {
        return Error(ErrorCode::BadConfiguration,
                     QStringLiteral("fault '%1': %2 (expected %3)").arg(text, reason, grammar()));
    };
    const QStringList words = text.simplified().split(u' ', Qt::SkipEmptyParts);
    if (words.size() < 5 || words[0] != QLatin1String("rank") || words[3] != QLatin1String("at"))
        return bad(QStringLiteral("not of the form 'rank <R> <kind> at <time>'"));

    SimFault fault;
    fault.text = words.join(u' ');
    bool ok = false;
    fault.rank = words[1].toInt(&ok);
    // toInt() takes "+1" and " 1"; a rank is plain digits.
    static const QRegularExpression digits(QStringLiteral("^\\d{1,4}$"));
    if (!ok || !digits.match(words[1]).hasMatch() || fault.rank > MaxRank)
        return bad(QStringLiteral("'%1' is not a rank 0..%2").arg(words[1]).arg(MaxRank));

    const auto kind = std::find_if(std::begin(kindNames), std::end(kindNames),
                                   [&](const KindName &k) { return words[2] == QLatin1String(k.name); });
    if (kind == std::end(kindNames))
        return bad(QStringLiteral("unknown event '%1' (io-error, out-of-range or terminates)").arg(words[2]));
    fault.kind = kind->kind;

    auto at = parseDuration(words[4]);
    if (!at)
        return bad(at.error().message);
    fault.at = *at;

    if (fault.kind == Kind::OutOfRange) {
        if (words.size() != 7 || words[5] != QLatin1String("for"))
            return bad(QStringLiteral("out-of-range needs 'for <time>': how long the node is away"));
        auto duration = parseDuration(words[6], QStringLiteral("the duration"));
        if (!duration)
            return bad(duration.error().message);
        if (duration->count() == 0)
            return bad(QStringLiteral("the duration must be longer than 0"));
        fault.duration = *duration;
    } else if (words.size() != 5) {
        return bad(QStringLiteral("unexpected '%1' after the time").arg(words.mid(5).join(u' ')));
    }
    return fault;
}

} // namespace mmpi
