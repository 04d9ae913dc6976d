// Shorthands the game's tests share to drive LightCycles by hand: a tick's
// bundle in one call, and a player's cycle by player number.
#pragma once

#include "lightcycles.h"

namespace mmpi::test {

inline game::TickBundle bundle(qint64 tick, QList<int> players,
                               QList<std::pair<int, game::Heading>> headings = {}, QList<int> frozen = {})
{
    game::TickBundle b;
    b.tick = tick;
    b.players = players;
    b.headings = headings;
    b.frozen = frozen;
    return b;
}

inline const game::Cycle &cycleOf(const game::LightCycles &state, int player)
{
    for (const game::Cycle &c : state.cycles())
        if (c.player == player)
            return c;
    qFatal("no such player");
}

} // namespace mmpi::test
