#include "ranktemplate.h"

#include <QRegularExpression>

namespace mmpi::tools {

using namespace Qt::StringLiterals;

Result<RankTemplate> RankTemplate::parse(const QString &text)
{
    static const QRegularExpression placeholder(u"rank(?:\\+(\\d{1,5}))?\\}"_s);
    RankTemplate result;
    result.m_text = text;
    Piece piece;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c == u'}')
            return Error(ErrorCode::BadConfiguration,
                         u"'}' at position %1 of '%2' closes no placeholder (use {rank} or {rank+N})"_s
                             .arg(i + 1).arg(text));
        if (c != u'{') {
            piece.literal += c;
            continue;
        }
        const auto match = placeholder.match(text, i + 1, QRegularExpression::NormalMatch,
                                             QRegularExpression::AnchorAtOffsetMatchOption);
        if (!match.hasMatch()) {
            const qsizetype end = text.indexOf(u'}', i);
            const QString what = end < 0 ? text.mid(i) : text.mid(i, end - i + 1);
            return Error(ErrorCode::BadConfiguration,
                         u"'%1' at position %2 of '%3' is not a placeholder (use {rank} or {rank+N})"_s
                             .arg(what).arg(i + 1).arg(text));
        }
        const int offset = match.hasCaptured(1) ? match.captured(1).toInt() : 0;
        if (offset > MaxOffset)
            return Error(ErrorCode::BadConfiguration,
                         u"'%1' in '%2': N is at most %3"_s.arg(u"{"_s + match.captured(0)).arg(text).arg(MaxOffset));
        piece.offset = offset;
        result.m_pieces.append(std::exchange(piece, {}));
        i = match.capturedEnd(0) - 1;
    }
    if (!piece.literal.isEmpty())
        result.m_pieces.append(piece);
    return result;
}

QString RankTemplate::expand(int rank) const
{
    QString out;
    for (const Piece &piece : m_pieces) {
        out += piece.literal;
        if (piece.offset >= 0)
            out += QString::number(rank + piece.offset);
    }
    return out;
}

bool RankTemplate::hasPlaceholder() const
{
    return std::any_of(m_pieces.begin(), m_pieces.end(), [](const Piece &p) { return p.offset >= 0; });
}

} // namespace mmpi::tools
