// A user's type that travels as an object (through its QDataStream
// operators), for the tests of messages and collectives of such types.
#pragma once

#include <QDataStream>
#include <QDebug>
#include <QString>

namespace mmpi::test {

struct Player
{
    QString name;
    qint32 score = 0;
    bool operator==(const Player &) const = default;
};
inline QDataStream &operator<<(QDataStream &s, const Player &p) { return s << p.name << p.score; }
inline QDataStream &operator>>(QDataStream &s, Player &p) { return s >> p.name >> p.score; }
inline QDebug operator<<(QDebug d, const Player &p) { return d << p.name << p.score; }

} // namespace mmpi::test
