// The game's window (demos/game): the GameBoard draws a known LightCycles
// state with the right colours at heads and trails, grey for a frozen
// player, dim for a removed one's trail and a ring round the local head; the
// score list follows joined/frozen/removed; and in the real window (Main.qml)
// of a 2-player game formed in this process, a key press changes the local
// player's wished heading, which every device then applies; a device that
// chooses lists a game hosted over tcp in its lobby, and a click on it joins.
#include "gameboard.h"
#include "gamecontroller.h"
#include "lightcyclestest.h"

#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>

using namespace mmpi;
using namespace mmpi::game;
using namespace mmpi::test;

namespace {

// Player 0, 1 and 2 ride three ticks; player 2 is frozen from tick 3 on.
LightCycles knownState()
{
    LightCycles game(20, 16);
    game.apply(bundle(1, {0, 1, 2}));
    game.apply(bundle(2, {0, 1, 2}));
    game.apply(bundle(3, {0, 1, 2}, {}, {2}));
    game.apply(bundle(4, {0, 1, 2}, {}, {2}));
    return game;
}

QColor pixel(const QImage &image, QPointF at)
{
    return image.pixelColor(at.toPoint());
}

// The cells of `player`'s trail, its head excluded.
QList<QPoint> trailOf(const LightCycles &game, int player)
{
    QList<QPoint> cells;
    for (int y = 0; y < game.height(); ++y)
        for (int x = 0; x < game.width(); ++x)
            if (game.ownerAt(x, y) == player && QPoint(x, y) != cycleOf(game, player).head)
                cells << QPoint(x, y);
    return cells;
}

// Repeater delegates are items of the scene but no QObject children of it.
QQuickItem *findItem(QQuickItem *in, const QString &name)
{
    if (in->objectName() == name)
        return in;
    for (QQuickItem *child : in->childItems())
        if (QQuickItem *found = findItem(child, name))
            return found;
    return nullptr;
}

WorldConfig localConfig(const QString &name, int rank, int size)
{
    WorldConfig c;
    c.transport = QStringLiteral("local");
    c.worldName = name;
    c.worldKey = name.toUtf8();
    c.rank = rank;
    c.size = size;
    c.rootAddress = QStringLiteral("local://") + name;
    c.formationTimeout = std::chrono::seconds(20);
    return c;
}

// A discovered tcp game on loopback: beacons and DNS-SD (built in) on lo
// only, at ports of this test's own.
WorldConfig loopbackDiscovery(const QString &name, bool host)
{
    const int port = 30000 + int(QCoreApplication::applicationPid() % 10000);
    WorldConfig c;
    c.mode = WorldConfig::Mode::Discovered;
    c.transport = QStringLiteral("tcp");
    c.transportOptions = {{QStringLiteral("beaconPort"), port},
                          {QStringLiteral("lobbyPort"), port + 10000},
                          {QStringLiteral("beaconTargets"), QStringList{QStringLiteral("127.0.0.1")}},
                          {QStringLiteral("interfaces"), QStringList{QStringLiteral("lo")}},
                          {QStringLiteral("dnsSdBackend"), QStringLiteral("builtin")},
                          {QStringLiteral("beaconInterval"), 100}};
    c.worldName = name;
    c.worldKey = "game-lobby-test";
    c.size = 2;
    c.rank = host ? 0 : NoRank;
    c.formationTimeout = std::chrono::seconds(30);
    return c;
}

QString textIn(QQuickItem *item)
{
    for (QQuickItem *child : item->childItems())
        if (const QString text = child->property("text").toString(); !text.isEmpty())
            return text;
    return {};
}

} // namespace

class TestGameBoard : public QObject
{
    Q_OBJECT
public:
    // Pixels must not depend on a GPU.
    static void initMain() { qputenv("QT_QUICK_BACKEND", "software"); }

private Q_SLOTS:
    void boardDrawsTheState()
    {
        QQuickWindow window;
        window.resize(400, 320); // 20 × 16 cells of 20 pixels
        GameBoard board(window.contentItem());
        board.setSize(QSizeF(400, 320));
        const LightCycles game = knownState();
        QCOMPARE(cycleOf(game, 2).frozen, true);
        board.setState(game);
        board.setLocalPlayer(1);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QImage image = window.grabWindow();
        QCOMPARE(image.size(), QSize(400, 320));
        QCOMPARE(board.cellRect(1, 2), QRectF(20, 40, 20, 20));

        for (int player : {0, 1}) {
            const Cycle &c = cycleOf(game, player);
            QVERIFY(c.alive && !c.frozen);
            QCOMPARE(pixel(image, board.cellRect(c.head.x(), c.head.y()).center()), GameBoard::playerColor(player));
            const QList<QPoint> trail = trailOf(game, player);
            QCOMPARE(trail.size(), 4); // the start cell and four moves, the last one the head
            for (QPoint cell : trail)
                QCOMPARE(pixel(image, board.cellRect(cell.x(), cell.y()).center()), GameBoard::trailColor(player));
        }
        QVERIFY(GameBoard::playerColor(0) != GameBoard::playerColor(1));
        // Frozen since tick 3: its head and trail are grey, and it did not move.
        const Cycle &frozen = cycleOf(game, 2);
        QCOMPARE(pixel(image, board.cellRect(frozen.head.x(), frozen.head.y()).center()), GameBoard::frozenHeadColor());
        const QList<QPoint> frozenTrail = trailOf(game, 2);
        QCOMPARE(frozenTrail.size(), 2); // it moved at ticks 1 and 2 only
        for (QPoint cell : frozenTrail)
            QCOMPARE(pixel(image, board.cellRect(cell.x(), cell.y()).center()), GameBoard::frozenTrailColor());
        // The local player's head has a white ring; the others' do not.
        for (int player : {0, 1}) {
            const Cycle &c = cycleOf(game, player);
            const QRectF r = board.cellRect(c.head.x(), c.head.y());
            const QColor beside = pixel(image, QPointF(r.right() + 2, r.center().y()));
            QCOMPARE(beside == GameBoard::ringColor(), player == 1);
        }
        // An empty cell shows the arena.
        QCOMPARE(game.ownerAt(0, 0), -1);
        QCOMPARE(pixel(image, board.cellRect(0, 0).center()), GameBoard::arenaColor());
    }

    void removedPlayersTrailIsDim()
    {
        QQuickWindow window;
        window.resize(200, 160);
        GameBoard board(window.contentItem());
        board.setSize(QSizeF(200, 160));
        LightCycles game = knownState();
        const QPoint frozenHead = cycleOf(game, 2).head;
        QVERIFY(game.apply(bundle(5, {0, 1})));
        board.setState(game);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QImage image = window.grabWindow();
        QCOMPARE(pixel(image, board.cellRect(frozenHead.x(), frozenHead.y()).center()), GameBoard::orphanTrailColor());
        const Cycle &c = cycleOf(game, 0);
        QCOMPARE(pixel(image, board.cellRect(c.head.x(), c.head.y()).center()), GameBoard::playerColor(0));
    }

    void scoreListFollowsTheState()
    {
        ScoreModel scores;
        scores.setLocalPlayer(1);
        LightCycles game = knownState();
        scores.update(game);
        QCOMPARE(scores.rowCount(), 3);
        QCOMPARE(scores.get(0).value(QStringLiteral("statusName")).toString(), QStringLiteral("joined"));
        QCOMPARE(scores.get(2).value(QStringLiteral("statusName")).toString(), QStringLiteral("frozen"));
        QCOMPARE(scores.get(1).value(QStringLiteral("self")).toBool(), true);
        QCOMPARE(scores.get(2).value(QStringLiteral("color")).value<QColor>(), GameBoard::playerColor(2));
        QVERIFY(game.apply(bundle(5, {0, 1})));
        scores.update(game);
        QCOMPARE(scores.rowCount(), 3); // a removed player keeps its row
        QCOMPARE(scores.get(2).value(QStringLiteral("statusName")).toString(), QStringLiteral("removed"));
        QVERIFY(scores.get(7).isEmpty());
    }

    void keyPressSteersTheLocalPlayer()
    {
        registerQmlTypes();
        const QString name = QStringLiteral("game-test-") + QUuid::createUuid().toString(QUuid::Id128).left(12);
        // A slow tick: the round lasts seconds, so the turn is seen in it.
        const GameSession::Options options{std::chrono::milliseconds(80), 0, false};
        GameController root, other;
        other.start(localConfig(name, 1, 2), options);
        QCOMPARE(other.phase(), GameController::Phase::Forming);
        QCOMPARE(other.steer(3), false); // not playing yet

        QQmlApplicationEngine engine;
        engine.setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(&other)}});
        engine.load(QUrl(QStringLiteral("qrc:/mmpi-game/Main.qml")));
        QCOMPARE(engine.rootObjects().size(), 1);
        auto *window = qobject_cast<QQuickWindow *>(engine.rootObjects().first());
        QVERIFY(window);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        // The lobby, while the root is not there.
        auto *lobby = window->findChild<QQuickItem *>(QStringLiteral("lobby"));
        auto *lobbyStatus = window->findChild<QQuickItem *>(QStringLiteral("lobbyStatus"));
        QVERIFY(lobby && lobbyStatus);
        QVERIFY(lobby->isVisible());
        QCOMPARE(lobbyStatus->property("text").toString(), QStringLiteral("Waiting for 2 players"));
        root.start(localConfig(name, 0, 2), options);
        QTRY_VERIFY_WITH_TIMEOUT(!lobby->isVisible(), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(root.phase(), GameController::Phase::Playing, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(other.phase(), GameController::Phase::Playing, 20000);
        QCOMPARE(other.player(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(other.tick() >= 1, 5000);
        auto *board = window->findChild<GameBoard *>(QStringLiteral("board"));
        QVERIFY(board);
        QTRY_VERIFY_WITH_TIMEOUT(board->hasActiveFocus(), 5000);
        QCOMPARE(board->localPlayer(), 1);

        // Every tick, on both devices: has player 1 turned left?
        bool turnedAtRoot = false, turnedHere = false;
        connect(&root, &GameController::ticked, this, [&] {
            turnedAtRoot |= cycleOf(root.session()->state(), 1).heading == Heading::Left;
        });
        connect(&other, &GameController::ticked, this, [&] {
            turnedHere |= cycleOf(other.session()->state(), 1).heading == Heading::Left;
        });
        QTest::keyClick(window, Qt::Key_X); // not a steering key
        QCOMPARE(other.heading(), -1);
        QTest::keyClick(window, Qt::Key_Left);
        QCOMPARE(other.heading(), int(Heading::Left));
        QCOMPARE(other.session()->wish(), Heading::Left);
        QTRY_VERIFY_WITH_TIMEOUT(turnedAtRoot && turnedHere, 5000);
        // WASD too.
        QTest::keyClick(window, Qt::Key_W);
        QCOMPARE(other.session()->wish(), Heading::Up);
        QCOMPARE(other.heading(), int(Heading::Up));
        // The touch buttons, and a swipe on the board.
        auto *right = findItem(window->contentItem(), QStringLiteral("steer1"));
        QVERIFY(right && right->isVisible());
        QTest::mouseClick(window, Qt::LeftButton, {}, right->mapToScene(QPointF(32, 32)).toPoint());
        QCOMPARE(other.session()->wish(), Heading::Right);
        const QPoint from = board->mapToScene(QPointF(100, 100)).toPoint();
        QTest::mousePress(window, Qt::LeftButton, {}, from);
        QTest::mouseMove(window, from + QPoint(0, 40));
        QTest::mouseRelease(window, Qt::LeftButton, {}, from + QPoint(0, 80));
        QCOMPARE(other.session()->wish(), Heading::Down);
        QCOMPARE(other.heading(), int(Heading::Down));
    }

    void personPicksAGameInTheLobby()
    {
        // Given a device whose lobby lists the games nearby ...
        registerQmlTypes();
        const QString name = QStringLiteral("lobby-") + QUuid::createUuid().toString(QUuid::Id128).left(8);
        const GameSession::Options options{std::chrono::milliseconds(40), 0, false};
        GameController host, other;
        other.choose(loopbackDiscovery(QString(), false), options);
        QCOMPARE(other.phase(), GameController::Phase::Choosing);
        QQmlApplicationEngine engine;
        engine.setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(&other)}});
        engine.load(QUrl(QStringLiteral("qrc:/mmpi-game/Main.qml")));
        QCOMPARE(engine.rootObjects().size(), 1);
        auto *window = qobject_cast<QQuickWindow *>(engine.rootObjects().first());
        QVERIFY(window && QTest::qWaitForWindowExposed(window));
        auto *nothing = findItem(window->contentItem(), QStringLiteral("nothingFound"));
        QVERIFY(nothing && nothing->isVisible());
        QVERIFY2(nothing->property("text").toString().startsWith(QStringLiteral("Looking for games")),
                 qPrintable(nothing->property("text").toString()));
        // ... when a game is hosted nearby, it is listed with its name and size ...
        host.start(loopbackDiscovery(name, true), options);
        QQuickItem *listed = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((listed = findItem(window->contentItem(), QStringLiteral("game0"))) && listed->isVisible(),
                                 20000);
        QVERIFY2(textIn(listed).startsWith(name + QStringLiteral(" on ")), qPrintable(textIn(listed)));
        QVERIFY2(textIn(listed).endsWith(QStringLiteral("1 of 2 players")), qPrintable(textIn(listed)));
        QVERIFY(!nothing->isVisible());
        // ... and a click on it joins that game: both play, this device as player 1.
        QTest::mouseClick(window, Qt::LeftButton, {}, listed->mapToScene(QPointF(20, 20)).toPoint());
        QTRY_COMPARE_WITH_TIMEOUT(other.phase(), GameController::Phase::Playing, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(host.phase(), GameController::Phase::Playing, 20000);
        QCOMPARE(other.player(), 1);
        QCOMPARE(other.world()->config().worldName, name);
        QCOMPARE(other.join(0), false); // once joined, the list is done
    }

    // Closing the window mid-game ends the app without a goodbye: the others
    // remove the player (SHRINK), say so in the banner and the score list,
    // and play on.
    void leavingMidGameRemovesThePlayer()
    {
        const QString name = QStringLiteral("game-test-") + QUuid::createUuid().toString(QUuid::Id128).left(12);
        const GameSession::Options options{std::chrono::milliseconds(20), 0, true};
        GameController a, b;
        auto leaver = std::make_unique<GameController>();
        a.start(localConfig(name, 0, 3), options);
        b.start(localConfig(name, 1, 3), options);
        leaver->start(localConfig(name, 2, 3), options);
        for (GameController *c : {&a, &b, leaver.get()})
            QTRY_COMPARE_WITH_TIMEOUT(c->phase(), GameController::Phase::Playing, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(b.tick() >= 5, 5000);
        QCOMPARE(a.players()->get(2).value(QStringLiteral("statusName")).toString(), QStringLiteral("joined"));
        QStringList bannersA, bannersB;
        connect(&a, &GameController::bannerChanged, this, [&] { bannersA << a.banner(); });
        connect(&b, &GameController::bannerChanged, this, [&] { bannersB << b.banner(); });
        QSignalSpy left(leaver.get(), &GameController::left);
        leaver->leave();
        QCOMPARE(left.size(), 1); // during the game: at once
        leaver.reset();
        for (GameController *c : {&a, &b})
            QTRY_COMPARE_WITH_TIMEOUT(c->players()->get(2).value(QStringLiteral("statusName")).toString(),
                                      QStringLiteral("removed"), 20000);
        QVERIFY(bannersA.contains(QStringLiteral("Player 2 left the game: removed")));
        QVERIFY(bannersB.contains(QStringLiteral("Player 2 left the game: removed")));
        const int after = b.tick();
        QTRY_VERIFY_WITH_TIMEOUT(a.tick() > after + 5 && b.tick() > after + 5, 5000);
        QCOMPARE(a.playerCount(), 2);
        QCOMPARE(a.phase(), GameController::Phase::Playing);
    }
};

QTEST_MAIN(TestGameBoard)
#include "tst_gameboard.moc"
