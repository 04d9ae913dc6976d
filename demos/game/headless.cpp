#include "headless.h"

#include <cstdio>

namespace mmpi::game {

namespace {

void say(const QString &line)
{
    std::printf("%s\n", qPrintable(line));
    std::fflush(stdout);
}

QString scores(const LightCycles &state)
{
    QStringList parts;
    for (const Cycle &c : state.cycles())
        parts << QStringLiteral("%1:%2").arg(c.player).arg(c.score);
    return parts.join(u',');
}

} // namespace

// One line per event, for people and for tests that compare devices.
void reportHeadless(GameSession *session, qint64 hashEvery)
{
    QObject::connect(session, &GameSession::ticked, session, [session, hashEvery](qint64 tick) {
        if (hashEvery > 0 && tick % hashEvery == 0)
            say(QStringLiteral("event=tick tick=%1 round=%2 hash=%3")
                    .arg(tick)
                    .arg(session->state().round())
                    .arg(session->state().hash(), 16, 16, QLatin1Char('0')));
    });
    QObject::connect(session, &GameSession::playerFrozen, session, [](int player, bool frozen) {
        say(QStringLiteral("event=%1 player=%2").arg(frozen ? QStringLiteral("frozen") : QStringLiteral("thawed")).arg(player));
    });
    QObject::connect(session, &GameSession::playerRemoved, session, [](int player) {
        say(QStringLiteral("event=removed player=%1").arg(player));
    });
    QObject::connect(session, &GameSession::finished, session, [session] {
        const LightCycles &state = session->state();
        say(QStringLiteral("event=done tick=%1 rounds=%2 hash=%3 scores=%4")
                .arg(state.tick())
                .arg(state.round())
                .arg(state.hash(), 16, 16, QLatin1Char('0'))
                .arg(scores(state)));
    });
}

} // namespace mmpi::game
