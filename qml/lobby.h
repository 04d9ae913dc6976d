// Lobby: waits until the wanted number of players are in a World. `ready`
// holds while the world is formed with at least `wanted` nodes not lost;
// allJoined() fires each time it becomes true (again).
#pragma once

#include <QObject>
#include "qmlworld.h"

#include <QPointer>
#include <QtQml/qqmlregistration.h>

namespace mmpi {


class Lobby : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(mmpi::QmlWorld *world READ world WRITE setWorld NOTIFY worldChanged)
    Q_PROPERTY(int wanted READ wanted WRITE setWanted NOTIFY wantedChanged)
    // Players in so far: while forming, as the world reports progress; once
    // formed, the nodes not lost.
    Q_PROPERTY(int joined READ joined NOTIFY joinedChanged)
    Q_PROPERTY(int missing READ missing NOTIFY joinedChanged)
    // (The signal is allJoined(), not ready(): QML cannot tell a signal and a
    // property of the same name apart.)
    Q_PROPERTY(bool ready READ ready NOTIFY readyChanged)
public:
    explicit Lobby(QObject *parent = nullptr);

    QmlWorld *world() const { return m_world; }
    void setWorld(QmlWorld *world);
    int wanted() const { return m_wanted; }
    void setWanted(int wanted);
    int joined() const { return m_joined; }
    int missing() const { return qMax(0, m_wanted - m_joined); }
    bool ready() const { return m_ready; }

Q_SIGNALS:
    void worldChanged();
    void wantedChanged();
    void joinedChanged();
    void readyChanged();
    void allJoined();

private:
    void reevaluate();

    QPointer<QmlWorld> m_world;
    int m_wanted = 2;
    int m_joined = 0;
    bool m_ready = false;
};

} // namespace mmpi
