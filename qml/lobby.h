// Lobby: waits until the wanted number of players are in a World. `ready`
// holds while the world is formed with at least `wanted` nodes not lost;
// allJoined() fires each time it becomes true (again). On the root of a
// world that confirms joins it lists the devices waiting (pendingJoins) and
// takes a person's answer (confirm, reject).
#pragma once

#include "joinrequestmodel.h"
#include "qmlworld.h"

#include <QObject>

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
    // Open join requests (World.confirmJoins): requestId, nodeId, address,
    // verificationCode; a row goes when its request is settled.
    Q_PROPERTY(mmpi::JoinRequestModel *pendingJoins READ pendingJoins CONSTANT)
    // Why the last confirm() or reject() was refused ("" after one that was taken).
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
public:
    explicit Lobby(QObject *parent = nullptr);

    QmlWorld *world() const { return m_world; }
    void setWorld(QmlWorld *world);
    int wanted() const { return m_wanted; }
    void setWanted(int wanted);
    int joined() const { return m_joined; }
    int missing() const { return qMax(0, m_wanted - m_joined); }
    bool ready() const { return m_ready; }
    JoinRequestModel *pendingJoins() const { return m_pendingJoins; }
    QString errorString() const { return m_errorString; }

    // Admit or turn away the device of an open request (World::confirmJoin,
    // rejectJoin). False, with errorString, if no such request is open.
    Q_INVOKABLE bool confirm(int requestId);
    Q_INVOKABLE bool reject(int requestId);

Q_SIGNALS:
    void worldChanged();
    void wantedChanged();
    void joinedChanged();
    void readyChanged();
    void allJoined();
    void errorStringChanged();

private:
    void reevaluate();
    void watchJoinRequests(QmlWorld *world);
    bool answer(int requestId, bool confirmed);
    void setErrorString(const QString &message);

    QPointer<QmlWorld> m_world;
    int m_wanted = 2;
    int m_joined = 0;
    bool m_ready = false;
    JoinRequestModel *m_pendingJoins;
    QString m_errorString;
};

} // namespace mmpi
