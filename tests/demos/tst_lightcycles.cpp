// The light-cycles rules (demos/game): moves, walls, trails, head-on
// crashes, reversals refused, frozen cycles, rounds and scores, players who
// leave; the same bundles give the same hash; the bundle encoding round
// trips and refuses malformed input.
#include "lightcyclestest.h"

#include <QTest>

using namespace mmpi::game;
using namespace mmpi::test;

class TestLightCycles : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void cyclesMoveAndLeaveTrails()
    {
        LightCycles game(20, 16);
        QVERIFY(game.apply(bundle(1, {0, 1})));
        QCOMPARE(game.round(), 1);
        // Two players: 0 on top heading down, 1 below heading up (round 1 swaps the order).
        const Cycle &a = cycleOf(game, 0), &b = cycleOf(game, 1);
        QVERIFY(a.alive && b.alive);
        const QPoint before = a.head;
        QVERIFY(game.apply(bundle(2, {0, 1})));
        QCOMPARE(cycleOf(game, 0).head, step(before, cycleOf(game, 0).heading));
        QCOMPARE(game.ownerAt(before.x(), before.y()), 0);
        // Only the next tick is taken.
        QVERIFY(!game.apply(bundle(2, {0, 1})));
        QVERIFY(!game.apply(bundle(5, {0, 1})));
        QCOMPARE(game.tick(), 2);
    }

    void wallEndsTheRoundAndTheOtherScores()
    {
        LightCycles game(10, 8);
        QVERIFY(game.apply(bundle(1, {0, 1})));
        // The cycle that starts on top heading down turns into the side wall
        // (a few cells away); the other runs the length of the arena.
        const int top = cycleOf(game, 0).heading == Heading::Down ? 0 : 1;
        const int other = 1 - top;
        qint64 tick = 2;
        QVERIFY(game.apply(bundle(tick++, {0, 1}, {{top, Heading::Left}})));
        while (game.round() == 1 && tick < 40)
            QVERIFY(game.apply(bundle(tick++, {0, 1})));
        QCOMPARE(game.round(), 2);
        QVERIFY(tick < 10);
        QCOMPARE(game.lastWinner(), other);
        QCOMPARE(cycleOf(game, other).score, 1);
        QCOMPARE(cycleOf(game, top).score, 0);
        // The new round cleared the arena except the new heads.
        int filled = 0;
        for (int y = 0; y < game.height(); ++y)
            for (int x = 0; x < game.width(); ++x)
                filled += game.ownerAt(x, y) != -1;
        QCOMPARE(filled, 2);
    }

    void headOnCrashKillsBoth()
    {
        LightCycles game(11, 8);
        QVERIFY(game.apply(bundle(1, {0, 1})));
        // Steer both towards the same column, then into each other.
        const Cycle a = cycleOf(game, 0), b = cycleOf(game, 1);
        QCOMPARE(a.head.y() < b.head.y() ? a.heading : b.heading, Heading::Down);
        qint64 tick = 2;
        while (game.round() == 1 && tick < 30) {
            const Cycle &c0 = cycleOf(game, 0), &c1 = cycleOf(game, 1);
            QList<std::pair<int, Heading>> turn;
            const Heading towards0 = c0.head.x() < c1.head.x() ? Heading::Right : Heading::Left;
            if (c0.head.x() != c1.head.x() && c0.head.y() == c1.head.y()) {
                turn = {{0, towards0}, {1, towards0 == Heading::Right ? Heading::Left : Heading::Right}};
            }
            QVERIFY(game.apply(bundle(tick++, {0, 1}, turn)));
        }
        QCOMPARE(game.round(), 2);
        // Nobody won: no score.
        QCOMPARE(game.lastWinner(), -1);
        QCOMPARE(cycleOf(game, 0).score + cycleOf(game, 1).score, 0);
    }

    void reversalIsRefused()
    {
        LightCycles game;
        QVERIFY(game.apply(bundle(1, {0, 1})));
        const Heading h = cycleOf(game, 0).heading;
        const Heading back = Heading((int(h) + 2) % 4);
        QVERIFY(game.apply(bundle(2, {0, 1}, {{0, back}})));
        QCOMPARE(cycleOf(game, 0).heading, h);
        QVERIFY(cycleOf(game, 0).alive);
    }

    void frozenCycleNeitherMovesNorCrashes()
    {
        LightCycles game;
        QVERIFY(game.apply(bundle(1, {0, 1, 2})));
        const QPoint at = cycleOf(game, 2).head;
        for (qint64 t = 2; t < 10; ++t)
            QVERIFY(game.apply(bundle(t, {0, 1, 2}, {}, {2})));
        QCOMPARE(cycleOf(game, 2).head, at);
        QVERIFY(cycleOf(game, 2).frozen);
        QVERIFY(cycleOf(game, 2).alive);
        QVERIFY(game.apply(bundle(10, {0, 1, 2})));
        QVERIFY(!cycleOf(game, 2).frozen);
        QVERIFY(cycleOf(game, 2).head != at);
    }

    void playerWhoLeavesIsRemoved()
    {
        LightCycles game;
        QVERIFY(game.apply(bundle(1, {0, 1, 2})));
        QVERIFY(game.apply(bundle(2, {0, 2})));
        QCOMPARE(game.cycles().size(), 2);
        QCOMPARE(game.cycles().at(1).player, 2);
    }

    void sameBundlesSameHash()
    {
        LightCycles a, b, c;
        for (qint64 t = 1; t <= 200; ++t) {
            TickBundle next = bundle(t, {0, 1, 2, 3});
            for (int p = 0; p < 4; ++p)
                next.headings.append({p, a.botHeading(p)});
            QVERIFY(a.apply(next));
            QVERIFY(b.apply(next));
            if (t == 100)
                next.headings[0].second = Heading((int(next.headings[0].second) + 1) % 4);
            QVERIFY(c.apply(next));
        }
        QCOMPARE(a.hash(), b.hash());
        QVERIFY(a.hash() != c.hash() || a.cycles().at(0).head != c.cycles().at(0).head);
    }

    void bundleEncodingRoundTripsAndRefusesGarbage()
    {
        TickBundle b = bundle(42, {0, 3, 5}, {{3, Heading::Left}, {5, Heading::Down}}, {5});
        b.last = true;
        const auto back = TickBundle::decode(b.encode());
        QVERIFY(back);
        QCOMPARE(back->tick, 42);
        QCOMPARE(back->players, (QList<int>{0, 3, 5}));
        QCOMPARE(back->frozen, QList<int>{5});
        QCOMPARE(back->headings.size(), 2);
        QCOMPARE(back->headings.at(0).second, Heading::Left);
        QVERIFY(back->last);
        QList<qint64> items = b.encode();
        QVERIFY(!TickBundle::decode(items.mid(0, items.size() - 1)));
        items[2] = 1000; // more players than items
        QVERIFY(!TickBundle::decode(items));
        QList<qint64> badHeading = b.encode();
        badHeading.last() = 9;
        QVERIFY(!TickBundle::decode(badHeading));
        QVERIFY(!TickBundle::decode({}));
    }
};

QTEST_GUILESS_MAIN(TestLightCycles)
#include "tst_lightcycles.moc"
