// Ticker: a fixed-rate tick sequence that every device of a World sees the
// same. The root's timer numbers the ticks (1, 2, 3, ...) and sends each to
// every other rank on the Ticker's channel; the others emit them as they
// arrive, in order, with no gaps (ordered links; a gap is refused). Turns
// follow the ticks: `turn` is the rank whose turn tick t is. docs/reference/qml.md#ticker-one-tick-sequence-for-every-device.
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>

#include <QObject>
#include "qmlworld.h"

#include <QPointer>
#include <QQmlParserStatus>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include <memory>

namespace mmpi {


class Ticker : public QObject, public QQmlParserStatus
{
    Q_OBJECT
    Q_INTERFACES(QQmlParserStatus)
    QML_ELEMENT
    Q_PROPERTY(mmpi::QmlWorld *world READ world WRITE setWorld NOTIFY worldChanged)
    Q_PROPERTY(int channel READ channel WRITE setChannel NOTIFY settingsChanged)
    // Milliseconds between ticks, at the root (10..60000).
    Q_PROPERTY(int interval READ interval WRITE setInterval NOTIFY settingsChanged)
    // At the root: whether ticks are sent. Elsewhere it only says whether
    // ticks are shown; the root decides the sequence.
    Q_PROPERTY(bool running READ running WRITE setRunning NOTIFY runningChanged)
    Q_PROPERTY(int ticksPerTurn READ ticksPerTurn WRITE setTicksPerTurn NOTIFY settingsChanged)
    Q_PROPERTY(bool attached READ attached NOTIFY attachedChanged)
    // The last tick seen here (0 before the first).
    Q_PROPERTY(int tick READ tick NOTIFY ticked)
    // The rank whose turn the current tick is (-1 before the first tick).
    Q_PROPERTY(int turn READ turn NOTIFY ticked)
    Q_PROPERTY(bool myTurn READ myTurn NOTIFY ticked)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
public:
    static constexpr int TickTag = 1;
    static constexpr int Root = 0;

    explicit Ticker(QObject *parent = nullptr);
    ~Ticker() override;

    QmlWorld *world() const { return m_world; }
    void setWorld(QmlWorld *world);
    int channel() const { return m_channel; }
    void setChannel(int channel);
    int interval() const { return m_interval; }
    void setInterval(int ms);
    bool running() const { return m_running; }
    void setRunning(bool running);
    int ticksPerTurn() const { return m_ticksPerTurn; }
    void setTicksPerTurn(int ticks);
    bool attached() const { return !m_comm.isNull(); }
    int tick() const { return int(m_tick); }
    int turn() const;
    bool myTurn() const;
    QString errorString() const { return m_error; }

    Q_INVOKABLE void start() { setRunning(true); }
    Q_INVOKABLE void stop() { setRunning(false); }

    void classBegin() override {}
    void componentComplete() override;

Q_SIGNALS:
    void worldChanged();
    void settingsChanged();
    void runningChanged();
    void attachedChanged();
    void errorStringChanged();
    void ticked(int tick);

private:
    void tryAttach();
    void detach();
    void rootTick();
    void received(int source, int tag, const Request &request);
    void apply(qint64 tick);
    void setError(const QString &message);
    void updateTimer();

    QPointer<QmlWorld> m_world;
    int m_channel = 100;
    int m_interval = 50;
    bool m_running = false;
    int m_ticksPerTurn = 1;
    bool m_complete = false;
    Communicator m_comm;
    std::unique_ptr<MessageListener> m_inbox;
    QTimer m_timer;
    qint64 m_tick = 0;
    QString m_error;
};

} // namespace mmpi
