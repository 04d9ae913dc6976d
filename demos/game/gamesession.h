// GameSession: one device's part in a lockstep game of LightCycles. Every
// device sends the root the heading its player wants; the root turns each
// tick into a bundle (who plays, who is frozen because out of range, the
// headings) and sends it to everyone, so every device applies the same
// bundles in the same order. A player whose app ends is removed (SHRINK):
// the survivors first agree on the ticks all of them have applied, the new
// root (if the old one died) goes on from there.
#pragma once

#include "lightcycles.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>
#include <mmpi/ft/faulttolerance.h>

#include <QCoroTask>
#include <QHash>
#include <QMap>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <memory>

namespace mmpi::game {

class GameSession : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        std::chrono::milliseconds tickInterval{50};
        qint64 lastTick = 0; // 0: endless
        bool bot = false;    // this device's player steers itself
    };

    // `ft` must protect its communicator already (ready()).
    GameSession(World *world, FaultTolerance *ft, Options options, QObject *parent = nullptr);
    ~GameSession() override;

    void start();
    // The local player's wish, sent to the root (takes effect at a later tick).
    void setHeading(Heading heading);
    // The heading the local player wants now (the last setHeading() or bot choice).
    Heading wish() const { return m_wish; }
    const LightCycles &state() const { return m_state; }
    int player() const { return m_player; }
    bool isRoot() const { return m_comm.rank() == 0; }

Q_SIGNALS:
    void ticked(qint64 tick);
    void playerFrozen(int player, bool frozen);
    void playerRemoved(int player);
    void finished();
    void failed(const mmpi::Error &error);

private:
    enum Tag { WishTag = 1, BundleTag = 2 };
    void listen();
    void handleMessage(int source, int tag, const QList<qint64> &items);
    void rootTick();
    TickBundle nextBundle() const;
    void receiveBundle(const TickBundle &bundle);
    void applyBundle(const TickBundle &bundle);
    void sendWish();
    void handleReconfigured(Policy policy, const QList<int> &failed);
    QCoro::Task<void> resync();

    World *m_world;
    FaultTolerance *m_ft;
    Options m_options;
    Communicator m_comm;
    std::unique_ptr<MessageListener> m_inbox;
    LightCycles m_state;
    int m_player = -1;
    Heading m_wish = Heading::Up;
    bool m_steered = false; // the player chose a heading since the last bundle
    QTimer m_timer;
    bool m_resyncing = false;
    bool m_finished = false;
    QHash<int, Heading> m_wishes;        // root: by player (world rank)
    QMap<qint64, TickBundle> m_pending;  // bundles that came early, by tick
    QMap<qint64, TickBundle> m_history;  // applied, for a new root to resend
    QList<int> m_frozen;
};

} // namespace mmpi::game
