#include "ticker.h"

#include "nodelistmodel.h"
#include "qmllogging.h"
#include "qmlworld.h"

namespace mmpi {

Ticker::Ticker(QObject *parent) : QObject(parent)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &Ticker::rootTick);
}

Ticker::~Ticker()
{
    detach();
}

void Ticker::componentComplete()
{
    m_complete = true;
    tryAttach();
}

void Ticker::setWorld(QmlWorld *world)
{
    if (m_world == world)
        return;
    detach();
    if (m_world)
        disconnect(m_world, nullptr, this, nullptr);
    m_world = world;
    if (world) {
        connect(world, &QmlWorld::stateChanged, this, &Ticker::tryAttach);
        connect(world, &QmlWorld::detaching, this, &Ticker::detach);
    }
    Q_EMIT worldChanged();
    tryAttach();
}

void Ticker::setChannel(int channel)
{
    if (m_channel == channel)
        return;
    if (attached()) {
        setError(QStringLiteral("the channel cannot change once the ticker is attached"));
        return;
    }
    m_channel = channel;
    Q_EMIT settingsChanged();
}

void Ticker::setInterval(int ms)
{
    if (ms < 10 || ms > 60000) {
        setError(QStringLiteral("interval %1 ms is out of range 10..60000").arg(ms));
        return;
    }
    if (m_interval == ms)
        return;
    m_interval = ms;
    Q_EMIT settingsChanged();
    updateTimer();
}

void Ticker::setRunning(bool running)
{
    if (m_running == running)
        return;
    m_running = running;
    Q_EMIT runningChanged();
    updateTimer();
}

void Ticker::setTicksPerTurn(int ticks)
{
    if (ticks < 1 || m_ticksPerTurn == ticks)
        return;
    m_ticksPerTurn = ticks;
    Q_EMIT settingsChanged();
}

int Ticker::turn() const
{
    if (m_tick <= 0 || !attached())
        return -1;
    return int(((m_tick - 1) / m_ticksPerTurn) % m_comm.size());
}

bool Ticker::myTurn() const
{
    return attached() && turn() == m_comm.rank();
}

void Ticker::setError(const QString &message)
{
    qCWarning(lcQml).noquote() << "Ticker:" << message;
    m_error = message;
    Q_EMIT errorStringChanged();
}

void Ticker::tryAttach()
{
    if (attached() || !m_complete || !m_world || m_world->state() != QmlWorld::State::Formed)
        return;
    if (m_channel < 0 || m_channel >= QmlWorld::UserChannels) {
        setError(QStringLiteral("channel %1 is out of range 0..%2").arg(m_channel).arg(QmlWorld::UserChannels - 1));
        return;
    }
    auto comm = m_world->channel(m_channel, this);
    if (!comm) {
        setError(comm.error().message);
        return;
    }
    m_comm = *comm;
    if (m_comm.rank() != Root) {
        m_inbox = std::make_unique<MessageListener>(m_comm, this, QStringLiteral("ticker"),
                                                    [this](const Status &status, const Request &request) {
            received(status.source, status.tag, request);
        });
    }
    Q_EMIT attachedChanged();
    updateTimer();
}

void Ticker::detach()
{
    if (!attached())
        return;
    m_timer.stop();
    m_inbox.reset();
    if (m_world)
        m_world->releaseChannel(m_channel, this);
    m_comm = Communicator();
    if (!QCoreApplication::closingDown())
        Q_EMIT attachedChanged();
}

void Ticker::updateTimer()
{
    const bool tickHere = attached() && m_running && m_comm.rank() == Root;
    if (!tickHere) {
        m_timer.stop();
        return;
    }
    m_timer.setInterval(m_interval);
    if (!m_timer.isActive())
        m_timer.start();
}

void Ticker::rootTick()
{
    const qint64 next = m_tick + 1;
    for (int r = 0; r < m_comm.size(); ++r) {
        // A gone node will not read it; the others get every tick, in order.
        if (r == Root || (m_world && m_world->nodes()->isGone(m_comm.worldRank(r))))
            continue;
        m_comm.isend(r, TickTag, next);
    }
    apply(next);
}

void Ticker::received(int source, int tag, const Request &request)
{
    if (source != Root || tag != TickTag) {
        setError(QStringLiteral("refused a message from rank %1 with tag %2: only the root sends ticks")
                     .arg(source).arg(tag));
        return;
    }
    const auto tick = request.value<qint64>();
    if (!tick) {
        setError(QStringLiteral("refused a tick: %1").arg(tick.error().toString()));
        return;
    }
    if (*tick != m_tick + 1) {
        setError(QStringLiteral("refused tick %1 after tick %2: ticks come one by one").arg(*tick).arg(m_tick));
        return;
    }
    apply(*tick);
}

void Ticker::apply(qint64 tick)
{
    m_tick = tick;
    if (m_running || m_comm.rank() != Root)
        Q_EMIT ticked(int(tick));
}

} // namespace mmpi
