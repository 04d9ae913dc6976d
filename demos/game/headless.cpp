#include "headless.h"

#include <QDeadlineTimer>

#include <cstdio>
#include <memory>

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
    // When this device applied its first and its last tick, on the
    // machine's monotonic clock (one clock for every process of a host, so
    // a benchmark running every node there compares devices).
    struct Ticks
    {
        qint64 count = 0;
        qint64 firstUs = 0;
        qint64 lastUs = 0;
    };
    auto ticks = std::make_shared<Ticks>();
    QObject::connect(session, &GameSession::ticked, session, [session, hashEvery, ticks](qint64 tick) {
        const qint64 nowUs = QDeadlineTimer::current().deadlineNSecs() / 1000;
        if (ticks->count++ == 0)
            ticks->firstUs = nowUs;
        ticks->lastUs = nowUs;
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
    QObject::connect(session, &GameSession::finished, session, [session, ticks] {
        const LightCycles &state = session->state();
        say(QStringLiteral("event=timing ticks=%1 first_us=%2 last_us=%3")
                .arg(ticks->count)
                .arg(ticks->firstUs)
                .arg(ticks->lastUs));
        say(QStringLiteral("event=done tick=%1 rounds=%2 hash=%3 scores=%4")
                .arg(state.tick())
                .arg(state.round())
                .arg(state.hash(), 16, 16, QLatin1Char('0'))
                .arg(scores(state)));
    });
}

} // namespace mmpi::game
