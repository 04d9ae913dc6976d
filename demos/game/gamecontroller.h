// GameController: one device's game as QML sees it. It owns the World, the
// FaultTolerance that protects the world communicator (SHRINK on any loss)
// and the GameSession, and publishes the lobby (the games announced nearby
// to pick from, then formation progress), the state at each tick, the score
// list and short banners about other players.
#pragma once

#include "gamesession.h"
#include "scoremodel.h"

#include <mmpi/world/world.h>
#include <mmpi/world/worldbrowser.h>
#include <worldlistmodel.h>

#include <QColor>
#include <QTimer>

#include <memory>
#include <optional>

namespace mmpi::game {

class GameController : public QObject
{
    Q_OBJECT
    Q_PROPERTY(Phase phase READ phase NOTIFY phaseChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY phaseChanged)
    // Lobby: the nodes joined so far and the world size wanted.
    Q_PROPERTY(int joined READ joined NOTIFY formationChanged)
    Q_PROPERTY(int expected READ expected NOTIFY formationChanged)
    // The local player (world rank), -1 until the world is formed.
    Q_PROPERTY(int player READ player NOTIFY playerChanged)
    Q_PROPERTY(bool bot READ bot NOTIFY phaseChanged)
    Q_PROPERTY(int tick READ tick NOTIFY stateUpdated)
    Q_PROPERTY(int round READ round NOTIFY stateUpdated)
    Q_PROPERTY(int playerCount READ playerCount NOTIFY stateUpdated)
    // The local cycle is still riding this round.
    Q_PROPERTY(bool alive READ alive NOTIFY stateUpdated)
    // The heading the local player asked for last (-1: none yet).
    Q_PROPERTY(int heading READ heading NOTIFY headingChanged)
    // What just happened to someone (frozen, back, removed, won), for a few seconds.
    Q_PROPERTY(QString banner READ banner NOTIFY bannerChanged)
    Q_PROPERTY(mmpi::game::ScoreModel *players READ players CONSTANT)
    // Choosing: the games announced nearby, a row each (name, host, joined,
    // wanted, foundBy, rootId, addresses), and why none is listed ("" while
    // nothing went wrong).
    Q_PROPERTY(mmpi::WorldListModel *gamesNearby READ gamesNearby CONSTANT)
    Q_PROPERTY(QString nothingFoundReason READ nothingFoundReason NOTIFY nothingFoundReasonChanged)

public:
    enum class Phase {
        Idle,     // start() not called
        Choosing, // the lobby lists the games nearby (choose()) until one is joined
        Forming,  // the lobby: waiting for every player
        Starting, // formed; protecting the communicator
        Playing,
        Finished, // the last tick was played
        Failed,   // errorString says why
    };
    Q_ENUM(Phase)

    explicit GameController(QObject *parent = nullptr);
    ~GameController() override;

    // Form the world, protect it, and play. Once only (else Failed).
    void start(const WorldConfig &config, GameSession::Options options);
    // List the games announced nearby over `base`'s transport and options
    // for a person to join(); `base` gives the rest of the joining config
    // (its key above all). Failed if the transport cannot listen for them.
    void choose(const WorldConfig &base, GameSession::Options options);
    // Join the game in row `row` of gamesNearby: start() with its name and
    // size. False (and nothingFoundReason says why) if no longer listed.
    Q_INVOKABLE bool join(int row);
    // Heading 0 up, 1 right, 2 down, 3 left; false (nothing sent) when not
    // playing, when a bot steers, or for another value.
    Q_INVOKABLE bool steer(int heading);
    Q_INVOKABLE QColor colorOf(int player) const;
    // End this device's part: after the game, a clean goodbye; during it, at
    // once (the others remove this player). left() says when the app may end.
    Q_INVOKABLE void leave();

    Phase phase() const { return m_phase; }
    QString errorString() const { return m_error.message; }
    Error error() const { return m_error; }
    int joined() const { return m_joined; }
    int expected() const { return m_expected; }
    int player() const { return m_player; }
    bool bot() const { return m_options.bot; }
    int tick() const;
    int round() const;
    int playerCount() const;
    bool alive() const;
    int heading() const { return m_heading; }
    QString banner() const { return m_banner; }
    ScoreModel *players() const { return m_scores; }
    WorldListModel *gamesNearby() const { return m_gamesNearby; }
    QString nothingFoundReason() const { return m_nothingFoundReason; }
    GameSession *session() const { return m_session.get(); }
    World *world() const { return m_world.get(); }

Q_SIGNALS:
    void phaseChanged();
    void formationChanged();
    void playerChanged();
    void stateUpdated();
    void headingChanged();
    void bannerChanged();
    void ticked(qint64 tick);
    void left();
    void nothingFoundReasonChanged();

private:
    void setPhase(Phase phase);
    void fail(const Error &error);
    void formWorld(const WorldConfig &config, GameSession::Options options);
    QCoro::Task<void> protectAndPlay();
    void connectSession();
    void handleTick(qint64 tick);
    void announce(const QString &text);
    QString leaderText() const;
    void finishLeaving();

    GameSession::Options m_options;
    std::unique_ptr<World> m_world;
    Communicator m_comm;
    std::unique_ptr<FaultTolerance> m_ft;
    std::unique_ptr<GameSession> m_session;
    ScoreModel *m_scores;
    WorldBrowser m_browser;
    WorldListModel *m_gamesNearby;
    WorldConfig m_joinBase;
    QString m_nothingFoundReason;
    QTimer m_bannerTimer;
    Phase m_phase = Phase::Idle;
    Error m_error;
    int m_joined = 0;
    int m_expected = 0;
    int m_player = -1;
    int m_heading = -1;
    int m_round = 0;
    bool m_leaving = false;
    bool m_left = false;
    QString m_banner;
};

// The types QML uses (URI MMPIGame 1.0): GameBoard, GameController, ScoreModel.
void registerQmlTypes();

} // namespace mmpi::game
