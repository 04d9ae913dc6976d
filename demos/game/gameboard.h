// GameBoard: the Qt Quick item that draws the light-cycles arena — trails
// and heads in each player's colour, frozen players in grey, the local
// player's head ringed in white — and turns arrow/WASD keys into headings.
// It shows a GameController's state at every tick, or a state set directly.
#pragma once

#include "lightcycles.h"

#include <QColor>
#include <QPointer>
#include <QQuickPaintedItem>

namespace mmpi::game {

class GameController;

class GameBoard : public QQuickPaintedItem
{
    Q_OBJECT
    Q_MOC_INCLUDE("gamecontroller.h")
    Q_PROPERTY(mmpi::game::GameController *controller READ controller WRITE setController NOTIFY controllerChanged)
    // The player drawn with a ring (-1: none); follows the controller if set.
    Q_PROPERTY(int localPlayer READ localPlayer WRITE setLocalPlayer NOTIFY localPlayerChanged)
    // Tick of the state shown.
    Q_PROPERTY(int tick READ tick NOTIFY stateChanged)

public:
    explicit GameBoard(QQuickItem *parent = nullptr);

    GameController *controller() const;
    void setController(GameController *controller);
    int localPlayer() const { return m_localPlayer; }
    void setLocalPlayer(int player);
    int tick() const { return int(m_state.tick()); }

    // Show `state` (a copy); the controller, if any, replaces it next tick.
    void setState(const LightCycles &state);
    const LightCycles &state() const { return m_state; }
    // Where cell (x, y) is drawn, in item coordinates.
    QRectF cellRect(int x, int y) const;

    // The colours, fixed so that every device (and a test) agrees.
    static QColor playerColor(int player);
    static QColor trailColor(int player);
    static QColor frozenHeadColor();
    static QColor frozenTrailColor();
    // Trails of players no longer in the game (removed).
    static QColor orphanTrailColor();
    static QColor backgroundColor();
    // The empty cells of the arena.
    static QColor arenaColor();
    static QColor ringColor();

    void paint(QPainter *painter) override;

Q_SIGNALS:
    void controllerChanged();
    void localPlayerChanged();
    void stateChanged();
    // An arrow or WASD key asked for a heading (also sent to the controller).
    void headingRequested(int heading);

protected:
    void keyPressEvent(QKeyEvent *event) override;

private:
    void pullState();
    QRectF arena() const;
    const Cycle *cycleOf(int player) const;
    QColor cellColor(int owner) const;

    QPointer<GameController> m_controller;
    LightCycles m_state;
    int m_localPlayer = -1;
};

} // namespace mmpi::game
