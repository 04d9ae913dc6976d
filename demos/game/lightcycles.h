// LightCycles: the game's rules, deterministic so that every device that
// applies the same tick bundles holds the same state, bit for bit. Cycles
// move one cell per tick and leave a wall behind; one that hits a wall, a
// trail or another cycle's head is out; the last one in wins the round.
#pragma once

#include <QByteArray>
#include <QList>
#include <QPoint>

namespace mmpi::game {

enum class Heading : qint8 { Up = 0, Right = 1, Down = 2, Left = 3 };

// What one tick does, decided by the root and applied everywhere.
struct TickBundle
{
    qint64 tick = 0;
    QList<int> players;        // the players in the game (world ranks), sorted
    QList<int> frozen;         // unreachable now: they neither move nor crash
    QList<std::pair<int, Heading>> headings; // wanted headings, by player
    bool last = false;         // the game ends after this tick

    QList<qint64> encode() const;
    static std::optional<TickBundle> decode(const QList<qint64> &items);
};

struct Cycle
{
    int player = -1;  // world rank
    QPoint head;
    Heading heading = Heading::Up;
    bool alive = true;
    bool frozen = false;
    int score = 0;
};

class LightCycles
{
public:
    LightCycles(int width = 64, int height = 48);

    int width() const { return m_width; }
    int height() const { return m_height; }
    qint64 tick() const { return m_tick; }
    int round() const { return m_round; }
    const QList<Cycle> &cycles() const { return m_cycles; }
    // The player whose trail fills a cell, or -1.
    int ownerAt(int x, int y) const { return m_grid.at(y * m_width + x); }
    // The winner of the round that ended last, or -1.
    int lastWinner() const { return m_lastWinner; }

    // The next tick: a bundle for tick() + 1 (others are refused: false).
    bool apply(const TickBundle &bundle);
    // FNV-1a over everything that matters: equal on every device.
    quint64 hash() const;
    // Where `player` should head next to stay in longest (a simple bot).
    Heading botHeading(int player) const;

private:
    void setPlayers(const QList<int> &players);
    void startRound();
    void move();
    void endRoundIfDecided();
    bool blocked(QPoint cell) const;
    int freeRun(QPoint from, Heading heading, int limit) const;

    int m_width;
    int m_height;
    qint64 m_tick = 0;
    int m_round = 0;
    int m_lastWinner = -1;
    QList<Cycle> m_cycles; // by player, sorted
    QList<qint32> m_grid;
};

QPoint step(QPoint from, Heading heading);
bool isReverse(Heading a, Heading b);

} // namespace mmpi::game
