// Headless play (bots): the game's events as lines on stdout, so that a run
// under mmpirun shows, and a test checks, that every device agrees.
#pragma once

#include "gamesession.h"

namespace mmpi::game {

// Prints event=tick (every `hashEvery` ticks, with the state's hash),
// event=frozen/thawed/removed, and at the end event=timing (how many ticks
// this device applied, the first and the last on the monotonic clock, µs)
// and event=done with the final hash and scores.
void reportHeadless(GameSession *session, qint64 hashEvery);

} // namespace mmpi::game
