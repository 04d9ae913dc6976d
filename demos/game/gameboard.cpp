#include "gameboard.h"

#include "gamecontroller.h"

#include <QKeyEvent>
#include <QPainter>

#include <array>
#include <optional>

namespace mmpi::game {

namespace {

std::optional<Heading> headingForKey(int key)
{
    switch (key) {
    case Qt::Key_Up:
    case Qt::Key_W:
        return Heading::Up;
    case Qt::Key_Right:
    case Qt::Key_D:
        return Heading::Right;
    case Qt::Key_Down:
    case Qt::Key_S:
        return Heading::Down;
    case Qt::Key_Left:
    case Qt::Key_A:
        return Heading::Left;
    default:
        return std::nullopt;
    }
}

} // namespace

GameBoard::GameBoard(QQuickItem *parent) : QQuickPaintedItem(parent)
{
    setFlag(ItemIsFocusScope, false);
    setActiveFocusOnTab(true);
    setAcceptedMouseButtons(Qt::NoButton);
    setFillColor(backgroundColor());
    // Pixels as painted, not smoothed: a cell is one flat colour.
    setAntialiasing(false);
}

GameController *GameBoard::controller() const
{
    return m_controller;
}

void GameBoard::setController(GameController *controller)
{
    if (m_controller == controller)
        return;
    if (m_controller)
        disconnect(m_controller, nullptr, this, nullptr);
    m_controller = controller;
    if (m_controller) {
        connect(m_controller, &GameController::stateUpdated, this, &GameBoard::pullState);
        connect(m_controller, &GameController::playerChanged, this, [this] { setLocalPlayer(m_controller->player()); });
        setLocalPlayer(m_controller->player());
        pullState();
    }
    Q_EMIT controllerChanged();
}

void GameBoard::setLocalPlayer(int player)
{
    if (m_localPlayer == player)
        return;
    m_localPlayer = player;
    Q_EMIT localPlayerChanged();
    update();
}

void GameBoard::pullState()
{
    if (m_controller && m_controller->session())
        setState(m_controller->session()->state());
}

void GameBoard::setState(const LightCycles &state)
{
    m_state = state;
    Q_EMIT stateChanged();
    update();
}

QColor GameBoard::playerColor(int player)
{
    static const std::array<QColor, 8> palette{
        QColor(0x00, 0xe5, 0xff), // cyan
        QColor(0xff, 0x91, 0x00), // orange
        QColor(0xff, 0x3d, 0xf2), // magenta
        QColor(0x76, 0xff, 0x03), // lime
        QColor(0xff, 0xea, 0x00), // yellow
        QColor(0xff, 0x17, 0x44), // red
        QColor(0x44, 0x8a, 0xff), // blue
        QColor(0x1d, 0xe9, 0xb6), // mint
    };
    return player < 0 ? frozenHeadColor() : palette.at(size_t(player) % palette.size());
}

// Trails are the player's colour at 60% over the background, so that the
// heads stand out.
QColor GameBoard::trailColor(int player)
{
    const QColor c = playerColor(player), bg = backgroundColor();
    auto mix = [](int a, int b) { return (a * 6 + b * 4) / 10; };
    return QColor(mix(c.red(), bg.red()), mix(c.green(), bg.green()), mix(c.blue(), bg.blue()));
}

QColor GameBoard::frozenHeadColor() { return QColor(0xb0, 0xb0, 0xb0); }
QColor GameBoard::frozenTrailColor() { return QColor(0x70, 0x70, 0x70); }
QColor GameBoard::orphanTrailColor() { return QColor(0x3a, 0x3a, 0x44); }
QColor GameBoard::backgroundColor() { return QColor(0x10, 0x14, 0x1c); }
QColor GameBoard::arenaColor() { return QColor(0x15, 0x1a, 0x24); }
QColor GameBoard::ringColor() { return QColor(0xff, 0xff, 0xff); }

// The largest area of square cells that fits, centred.
QRectF GameBoard::arena() const
{
    const int w = m_state.width(), h = m_state.height();
    const qreal cell = std::max<qreal>(1.0, std::floor(std::min(width() / w, height() / h)));
    const QSizeF size(cell * w, cell * h);
    return QRectF(QPointF(std::floor((width() - size.width()) / 2), std::floor((height() - size.height()) / 2)), size);
}

QRectF GameBoard::cellRect(int x, int y) const
{
    const QRectF a = arena();
    const qreal cell = a.width() / m_state.width();
    return QRectF(a.left() + x * cell, a.top() + y * cell, cell, cell);
}

const Cycle *GameBoard::cycleOf(int player) const
{
    for (const Cycle &c : m_state.cycles())
        if (c.player == player)
            return &c;
    return nullptr;
}

QColor GameBoard::cellColor(int owner) const
{
    const Cycle *c = cycleOf(owner);
    if (!c)
        return orphanTrailColor();
    return c->frozen ? frozenTrailColor() : trailColor(owner);
}

void GameBoard::paint(QPainter *painter)
{
    painter->setRenderHint(QPainter::Antialiasing, false);
    const QRectF a = arena();
    painter->fillRect(a, arenaColor());
    // A cell leaves a one-pixel gap when cells are large, so trails read as
    // segments of a grid.
    const qreal cell = a.width() / m_state.width();
    const qreal gap = cell >= 6 ? 1 : 0;
    for (int y = 0; y < m_state.height(); ++y) {
        for (int x = 0; x < m_state.width(); ++x) {
            const int owner = m_state.ownerAt(x, y);
            if (owner >= 0)
                painter->fillRect(cellRect(x, y).adjusted(0, 0, -gap, -gap), cellColor(owner));
        }
    }
    for (const Cycle &c : m_state.cycles()) {
        if (!c.alive)
            continue;
        const QRectF r = cellRect(c.head.x(), c.head.y());
        if (c.player == m_localPlayer) {
            const qreal ring = std::max<qreal>(2, std::floor(cell / 3));
            painter->fillRect(r.adjusted(-ring, -ring, ring, ring), ringColor());
        }
        painter->fillRect(r, c.frozen ? frozenHeadColor() : playerColor(c.player));
    }
    painter->setPen(QPen(QColor(0x2c, 0x34, 0x48), 1));
    painter->setBrush(Qt::NoBrush);
    painter->drawRect(a.adjusted(-1, -1, 0, 0));
}

void GameBoard::keyPressEvent(QKeyEvent *event)
{
    const auto heading = headingForKey(event->key());
    if (!heading) {
        QQuickPaintedItem::keyPressEvent(event);
        return;
    }
    event->accept();
    Q_EMIT headingRequested(int(*heading));
    if (m_controller)
        m_controller->steer(int(*heading));
}

} // namespace mmpi::game
