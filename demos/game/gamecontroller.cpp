#include "gamecontroller.h"

#include "gameboard.h"

#include <QLoggingCategory>
#include <QPointer>
#include <QQmlEngine>

namespace mmpi::game {

namespace {

Q_LOGGING_CATEGORY(lcGameUi, "mmpi.demo.game.ui")

constexpr auto BannerTime = std::chrono::milliseconds(3000);

} // namespace

GameController::GameController(QObject *parent)
    : QObject(parent), m_scores(new ScoreModel(this)), m_gamesNearby(new WorldListModel(&m_browser, this))
{
    m_bannerTimer.setSingleShot(true);
    m_bannerTimer.setInterval(BannerTime);
    connect(&m_bannerTimer, &QTimer::timeout, this, [this] {
        m_banner.clear();
        Q_EMIT bannerChanged();
    });
}

// The session and the protection go before the world they use.
GameController::~GameController()
{
    m_session.reset();
    m_ft.reset();
    m_comm = {};
}

void GameController::setPhase(Phase phase)
{
    if (m_phase == phase)
        return;
    m_phase = phase;
    Q_EMIT phaseChanged();
}

void GameController::fail(const Error &error)
{
    if (m_phase == Phase::Failed)
        return;
    qCWarning(lcGameUi).noquote() << "the game failed:" << error.toString();
    m_error = error;
    setPhase(Phase::Failed);
}

void GameController::choose(const WorldConfig &base, GameSession::Options options)
{
    if (m_phase != Phase::Idle)
        return fail({ErrorCode::BadConfiguration, QStringLiteral("the game was started twice")});
    if (auto browsing = m_browser.start(base.transport, base.transportOptions); !browsing)
        return fail(browsing.error());
    m_joinBase = base;
    m_options = options;
    setPhase(Phase::Choosing);
}

bool GameController::join(int row)
{
    if (m_phase != Phase::Choosing)
        return false;
    auto config = m_browser.joinConfig(m_gamesNearby->rootIdAt(row), m_joinBase);
    if (!config) {
        m_nothingFoundReason = QStringLiteral("that game is no longer announced: %1").arg(config.error().message);
        Q_EMIT nothingFoundReasonChanged();
        return false;
    }
    m_browser.stop();
    qCInfo(lcGameUi).noquote() << "joining the game" << config->worldName << "of" << config->size << "players";
    formWorld(*config, m_options);
    return true;
}

void GameController::start(const WorldConfig &config, GameSession::Options options)
{
    if (m_phase != Phase::Idle)
        return fail({ErrorCode::BadConfiguration, QStringLiteral("the game was started twice")});
    formWorld(config, options);
}

void GameController::formWorld(const WorldConfig &config, GameSession::Options options)
{
    if (auto valid = config.validate(); !valid)
        return fail(valid.error());
    m_options = options;
    m_expected = config.size;
    Q_EMIT formationChanged();
    m_world = std::make_unique<World>();
    // The world communicator routes the frames, so it is made before form().
    auto comm = Communicator::world(*m_world);
    if (!comm)
        return fail(comm.error());
    m_comm = *comm;
    connect(m_world.get(), &World::formationProgress, this, [this](int joined, int expected) {
        m_joined = joined;
        m_expected = expected;
        Q_EMIT formationChanged();
    });
    connect(m_world.get(), &World::errorOccurred, this, [this](const Error &error) {
        if (m_world->state() == World::State::Failed)
            fail(error);
    });
    connect(m_world.get(), &World::formed, this, [this] { protectAndPlay(); });
    setPhase(Phase::Forming);
    m_world->form(config);
}

// Protection is collective: every device runs it once formed, then plays.
QCoro::Task<void> GameController::protectAndPlay()
{
    QPointer<GameController> self(this);
    m_joined = m_world->size();
    m_expected = m_world->size();
    Q_EMIT formationChanged();
    m_player = m_world->rank();
    m_scores->setLocalPlayer(m_player);
    Q_EMIT playerChanged();
    setPhase(Phase::Starting);
    m_ft = std::make_unique<FaultTolerance>(m_world.get());
    for (auto failureClass : {World::FailureClass::Normal, World::FailureClass::Range, World::FailureClass::NodeTerm})
        m_ft->setPolicy(failureClass, Policy::Shrink);
    const Communicator comm = m_comm;
    const auto protection = m_ft->protect(comm);
    const auto ok = co_await protection;
    if (!self)
        co_return;
    if (!ok) {
        fail(ok.error());
        co_return;
    }
    m_session = std::make_unique<GameSession>(m_world.get(), m_ft.get(), m_options);
    connectSession();
    setPhase(Phase::Playing);
    m_session->start();
}

void GameController::connectSession()
{
    GameSession *s = m_session.get();
    connect(s, &GameSession::ticked, this, &GameController::handleTick);
    connect(s, &GameSession::playerFrozen, this, [this](int player, bool frozen) {
        announce(frozen ? QStringLiteral("Player %1 is out of range: frozen").arg(player)
                        : QStringLiteral("Player %1 is back").arg(player));
    });
    connect(s, &GameSession::playerRemoved, this, [this](int player) {
        m_scores->markRemoved(player);
        announce(QStringLiteral("Player %1 left the game: removed").arg(player));
    });
    connect(s, &GameSession::finished, this, [this] {
        setPhase(Phase::Finished);
        announce(QStringLiteral("Game over: %1").arg(leaderText()));
    });
    connect(s, &GameSession::failed, this, &GameController::fail);
}

void GameController::handleTick(qint64 tick)
{
    const LightCycles &state = m_session->state();
    m_scores->update(state);
    if (state.round() != m_round) {
        // A round ended (the first tick starts round 1: nothing to say).
        if (m_round > 0 && state.lastWinner() >= 0)
            announce(QStringLiteral("Player %1 wins round %2").arg(state.lastWinner()).arg(m_round));
        m_round = state.round();
    }
    Q_EMIT stateUpdated();
    Q_EMIT ticked(tick);
}

void GameController::announce(const QString &text)
{
    m_banner = text;
    m_bannerTimer.start();
    Q_EMIT bannerChanged();
}

QString GameController::leaderText() const
{
    const Cycle *best = nullptr;
    for (const Cycle &c : m_session->state().cycles())
        if (!best || c.score > best->score)
            best = &c;
    if (!best)
        return QStringLiteral("no players left");
    return QStringLiteral("Player %1 leads with %2").arg(best->player).arg(best->score);
}

bool GameController::steer(int heading)
{
    if (heading < 0 || heading > 3 || m_options.bot || !m_session || m_phase != Phase::Playing)
        return false;
    m_session->setHeading(Heading(heading));
    if (m_heading != heading) {
        m_heading = heading;
        Q_EMIT headingChanged();
    }
    return true;
}

QColor GameController::colorOf(int player) const
{
    return GameBoard::playerColor(player);
}

void GameController::leave()
{
    if (m_leaving)
        return;
    m_leaving = true;
    const bool clean = m_world && (m_phase == Phase::Finished || m_phase == Phase::Idle);
    if (!clean || m_world->state() != World::State::Formed)
        return finishLeaving();
    // Wait for the peers' goodbyes, but never longer than the close timeout
    // and a little more.
    connect(m_world.get(), &World::stateChanged, this, [this](World::State state) {
        if (state == World::State::Closed || state == World::State::Failed)
            finishLeaving();
    });
    const auto limit = m_world->config().closeTimeout + std::chrono::seconds(1);
    QTimer::singleShot(limit, this, &GameController::finishLeaving);
    m_world->close();
}

void GameController::finishLeaving()
{
    if (m_left)
        return;
    m_left = true;
    Q_EMIT left();
}

int GameController::tick() const
{
    return m_session ? int(m_session->state().tick()) : 0;
}

int GameController::round() const
{
    return m_session ? m_session->state().round() : 0;
}

int GameController::playerCount() const
{
    return m_session ? int(m_session->state().cycles().size()) : 0;
}

bool GameController::alive() const
{
    if (!m_session)
        return false;
    for (const Cycle &c : m_session->state().cycles())
        if (c.player == m_player)
            return c.alive;
    return false;
}

void registerQmlTypes()
{
    qmlRegisterType<GameBoard>("MMPIGame", 1, 0, "GameBoard");
    qmlRegisterUncreatableType<GameController>("MMPIGame", 1, 0, "GameController",
                                               QStringLiteral("the app makes the controller"));
    qmlRegisterUncreatableType<ScoreModel>("MMPIGame", 1, 0, "ScoreModel",
                                           QStringLiteral("GameController.players is the score list"));
}

} // namespace mmpi::game
