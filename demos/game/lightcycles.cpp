#include "lightcycles.h"

#include <algorithm>

namespace mmpi::game {

namespace {

// A list on the wire: its length, then its items.
bool readList(const QList<qint64> &items, qsizetype &at, qsizetype width, QList<qint64> &out)
{
    if (at >= items.size())
        return false;
    const qint64 n = items.at(at++);
    if (n < 0 || n * width > items.size() - at)
        return false;
    out = items.mid(at, n * width);
    at += n * width;
    return true;
}

constexpr quint64 FnvOffset = 14695981039346656037ull;
constexpr quint64 FnvPrime = 1099511628211ull;

void mix(quint64 &h, qint64 value)
{
    for (int i = 0; i < 8; ++i) {
        h ^= quint64(value >> (8 * i)) & 0xff;
        h *= FnvPrime;
    }
}

} // namespace

QPoint step(QPoint from, Heading heading)
{
    switch (heading) {
    case Heading::Up:
        return from + QPoint(0, -1);
    case Heading::Right:
        return from + QPoint(1, 0);
    case Heading::Down:
        return from + QPoint(0, 1);
    case Heading::Left:
        return from + QPoint(-1, 0);
    }
    return from;
}

bool isReverse(Heading a, Heading b)
{
    return (int(a) + 2) % 4 == int(b);
}

QList<qint64> TickBundle::encode() const
{
    QList<qint64> items{tick, last ? 1 : 0, players.size()};
    for (int p : players)
        items << p;
    items << frozen.size();
    for (int p : frozen)
        items << p;
    items << headings.size();
    for (const auto &[player, heading] : headings)
        items << player << qint64(heading);
    return items;
}

std::optional<TickBundle> TickBundle::decode(const QList<qint64> &items)
{
    if (items.size() < 3)
        return std::nullopt;
    TickBundle b;
    b.tick = items.at(0);
    b.last = items.at(1) != 0;
    qsizetype at = 2;
    QList<qint64> players, frozen, headings;
    if (!readList(items, at, 1, players) || !readList(items, at, 1, frozen) || !readList(items, at, 2, headings)
        || at != items.size())
        return std::nullopt;
    for (qint64 p : players)
        b.players << int(p);
    for (qint64 p : frozen)
        b.frozen << int(p);
    for (qsizetype i = 0; i < headings.size(); i += 2) {
        if (headings.at(i + 1) < 0 || headings.at(i + 1) > 3)
            return std::nullopt;
        b.headings.append({int(headings.at(i)), Heading(headings.at(i + 1))});
    }
    return b;
}

LightCycles::LightCycles(int width, int height)
    : m_width(width), m_height(height), m_grid(width * height, -1)
{
}

bool LightCycles::apply(const TickBundle &bundle)
{
    if (bundle.tick != m_tick + 1)
        return false;
    m_tick = bundle.tick;
    setPlayers(bundle.players);
    for (Cycle &c : m_cycles)
        c.frozen = bundle.frozen.contains(c.player);
    for (const auto &[player, heading] : bundle.headings) {
        const auto it = std::find_if(m_cycles.begin(), m_cycles.end(), [p = player](const Cycle &c) {
            return c.player == p;
        });
        if (it != m_cycles.end() && it->alive && !isReverse(it->heading, heading))
            it->heading = heading;
    }
    if (m_round == 0)
        startRound();
    move();
    endRoundIfDecided();
    return true;
}

// A player who left takes its cycle (not its trail) along; one who arrives
// waits for the next round.
void LightCycles::setPlayers(const QList<int> &players)
{
    m_cycles.removeIf([&](const Cycle &c) { return !players.contains(c.player); });
    for (int p : players) {
        if (std::none_of(m_cycles.begin(), m_cycles.end(), [p](const Cycle &c) { return c.player == p; })) {
            Cycle c;
            c.player = p;
            c.alive = false;
            m_cycles.append(c);
        }
    }
    std::sort(m_cycles.begin(), m_cycles.end(), [](const Cycle &a, const Cycle &b) { return a.player < b.player; });
}

// Integer placement only: every device, whatever its floating point, agrees.
void LightCycles::startRound()
{
    ++m_round;
    std::fill(m_grid.begin(), m_grid.end(), -1);
    const int n = int(m_cycles.size());
    for (int i = 0; i < n; ++i) {
        Cycle &c = m_cycles[(i + m_round) % n];
        const bool top = i % 2 == 0;
        c.head = QPoint((i + 1) * m_width / (n + 1), top ? m_height / 4 : 3 * m_height / 4);
        c.heading = top ? Heading::Down : Heading::Up;
        c.alive = true;
        m_grid[c.head.y() * m_width + c.head.x()] = c.player;
    }
}

bool LightCycles::blocked(QPoint cell) const
{
    return cell.x() < 0 || cell.y() < 0 || cell.x() >= m_width || cell.y() >= m_height
        || m_grid.at(cell.y() * m_width + cell.x()) != -1;
}

// Every cycle moves at once: a crash is decided on the cells before the move,
// and two heads entering one cell both crash.
void LightCycles::move()
{
    QList<QPoint> next(m_cycles.size());
    for (qsizetype i = 0; i < m_cycles.size(); ++i)
        next[i] = step(m_cycles.at(i).head, m_cycles.at(i).heading);
    QList<bool> crashed(m_cycles.size(), false);
    for (qsizetype i = 0; i < m_cycles.size(); ++i) {
        const Cycle &c = m_cycles.at(i);
        if (!c.alive || c.frozen)
            continue;
        crashed[i] = blocked(next.at(i));
        for (qsizetype j = 0; j < m_cycles.size(); ++j) {
            const Cycle &o = m_cycles.at(j);
            if (j != i && o.alive && !o.frozen && next.at(j) == next.at(i))
                crashed[i] = true;
        }
    }
    for (qsizetype i = 0; i < m_cycles.size(); ++i) {
        Cycle &c = m_cycles[i];
        if (!c.alive || c.frozen)
            continue;
        if (crashed.at(i)) {
            c.alive = false;
            continue;
        }
        c.head = next.at(i);
        m_grid[c.head.y() * m_width + c.head.x()] = c.player;
    }
}

void LightCycles::endRoundIfDecided()
{
    const auto alive = std::count_if(m_cycles.begin(), m_cycles.end(), [](const Cycle &c) { return c.alive; });
    const bool decided = m_cycles.size() >= 2 ? alive <= 1 : alive == 0;
    if (!decided || m_cycles.isEmpty())
        return;
    m_lastWinner = -1;
    for (Cycle &c : m_cycles) {
        if (c.alive && m_cycles.size() >= 2) {
            ++c.score;
            m_lastWinner = c.player;
        }
    }
    startRound();
}

quint64 LightCycles::hash() const
{
    quint64 h = FnvOffset;
    mix(h, m_tick);
    mix(h, m_round);
    for (const Cycle &c : m_cycles) {
        for (qint64 v : {qint64(c.player), qint64(c.head.x()), qint64(c.head.y()), qint64(c.heading),
                         qint64(c.alive), qint64(c.frozen), qint64(c.score)})
            mix(h, v);
    }
    for (qint32 cell : m_grid)
        mix(h, cell);
    return h;
}

int LightCycles::freeRun(QPoint from, Heading heading, int limit) const
{
    int run = 0;
    for (QPoint cell = step(from, heading); run < limit && !blocked(cell); cell = step(cell, heading))
        ++run;
    return run;
}

Heading LightCycles::botHeading(int player) const
{
    const auto it = std::find_if(m_cycles.begin(), m_cycles.end(), [player](const Cycle &c) {
        return c.player == player;
    });
    if (it == m_cycles.end())
        return Heading::Up;
    Heading best = it->heading;
    int bestRun = freeRun(it->head, best, 12);
    for (int h = 0; h < 4; ++h) {
        const Heading candidate = Heading(h);
        if (candidate == it->heading || isReverse(it->heading, candidate))
            continue;
        const int run = freeRun(it->head, candidate, 12);
        if (run > bestRun) {
            best = candidate;
            bestRun = run;
        }
    }
    return best;
}

} // namespace mmpi::game
