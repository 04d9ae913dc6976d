// RankTemplate: a piece of the command line that differs per rank, such as
// "ip netns exec ns{rank}" or "10.77.0.{rank+1}" (--rank-prefix,
// --rank-address). Its placeholders are {rank} and {rank+N}; every other
// brace is an error, so a typo is reported instead of passed to a node.
#pragma once

#include <mmpi/core/result.h>

#include <QList>
#include <QString>

namespace mmpi::tools {

class RankTemplate
{
public:
    // The error message names what is wrong and where, ready to follow
    // "--option: ".
    static Result<RankTemplate> parse(const QString &text);

    QString expand(int rank) const;
    bool hasPlaceholder() const;
    QString text() const { return m_text; }

    // Largest N of {rank+N}: keeps expanded numbers far from overflow.
    static constexpr int MaxOffset = 65535;

private:
    struct Piece
    {
        QString literal;
        int offset = -1; // >= 0: the placeholder {rank+offset}, after the literal
    };

    QString m_text;
    QList<Piece> m_pieces;
};

} // namespace mmpi::tools
