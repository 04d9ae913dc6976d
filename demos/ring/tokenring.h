// TokenRing: the first thing a new MMPI user runs. Rank 0 sends a token around
// the ring of every rank for a number of rounds; each hop stamps who got it and
// when, and rank 0 prints the table at the end.
#pragma once

#include <mmpi/world/world.h>

#include <QList>
#include <QTextStream>

namespace mmpi {

class TokenRing : public QObject
{
    Q_OBJECT
public:
    TokenRing(World *world, int rounds, QTextStream &out);

    // Starts the token on rank 0 (call once the world is formed).
    void start();

Q_SIGNALS:
    // The ring is done on this node (rank 0 has printed its table).
    void finished();
    void failed(const QString &reason);

private:
    // One stamp per hop: round, source, destination, token value, time (µs).
    static constexpr int StampSize = 5;
    enum Tag { TokenTag = 1, DoneTag = 2 };

    void handleFrame(const Frame &frame);
    void forward(QList<qint64> token);
    void finish(const QList<qint64> &token);
    void printTable(const QList<qint64> &token) const;
    void send(int destination, Tag tag, const QList<qint64> &items);

    World *m_world;
    int m_rounds;
    QTextStream &m_out;
};

} // namespace mmpi
