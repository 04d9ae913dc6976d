// Lobby: waits until the wanted number of players are in a World. `ready`
// holds while the world is formed with at least `wanted` nodes not lost;
// allJoined() fires each time it becomes true (again). On the root of a
// world that confirms joins it lists the devices waiting (pendingJoins) and
// takes a person's answer (confirm, reject). While `browsing` it lists the
// worlds announced nearby (foundWorlds, a WorldBrowser's) for a person to
// pick() one, says why nothing was found, shows the root's join code
// with its QR image, and takes the root's addresses a person typed.
#pragma once

#include "joinrequestmodel.h"
#include "qmlworld.h"
#include "worldlistmodel.h"

#include <mmpi/world/worldbrowser.h>

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
    // Listing the worlds announced nearby over the World's transport and
    // options (again whenever those change; if browsing cannot start,
    // nothingFoundReason says why and it stays on, to start when they do
    // change): foundWorlds has a row per world,
    // roles name, host, joined, wanted, foundBy ("DnsSd", "Beacon"),
    // rootId, addresses.
    Q_PROPERTY(bool browsing READ browsing WRITE setBrowsing NOTIFY browsingChanged)
    Q_PROPERTY(mmpi::WorldListModel *foundWorlds READ foundWorlds CONSTANT)
    // Why no world was found or joined: the browser's error and the
    // World's discovery steps that gave up ("Beacon: no root of world ..."),
    // a line each; "" while nothing has gone wrong.
    Q_PROPERTY(QString nothingFoundReason READ nothingFoundReason NOTIFY nothingFoundReasonChanged)
    // The World's join code as a person types it, and its QR image as an
    // image URL for an Image's source ("" without a valid code).
    Q_PROPERTY(QString joinCode READ joinCode NOTIFY joinCodeChanged)
    Q_PROPERTY(QString joinCodeImage READ joinCodeImage NOTIFY joinCodeChanged)
    // The root's addresses as a person typed them, for the World's Address
    // step (World.rootAddresses, WorldConfig::rootAddresses): "host" or
    // "host:port" each, several in one entry apart by commas or spaces, as
    // one text field gives them. A malformed one is kept, for the person to
    // correct, and named in errorString (start() refuses it too).
    Q_PROPERTY(QStringList rootAddresses READ rootAddresses WRITE setRootAddresses NOTIFY rootAddressesChanged)
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
    bool browsing() const { return m_browsing; }
    void setBrowsing(bool on);
    WorldListModel *foundWorlds() const { return m_foundWorlds; }
    QString nothingFoundReason() const { return m_nothingFoundReason; }
    QString joinCode() const { return m_joinCode; }
    QString joinCodeImage() const { return m_joinCodeImage; }
    QStringList rootAddresses() const { return m_rootAddresses; }
    void setRootAddresses(const QStringList &typed);

    // Joins the world of foundWorlds' row `row`: the World becomes a
    // discovered node of that name and size and starts. False, with
    // errorString, without a World, for no such row, or if it will not start.
    Q_INVOKABLE bool pick(int row);
    // Gives the World (a root) a fresh join code for its interfaces and
    // beacon port (transport options `interfaces`, `beaconPort`). False,
    // with errorString, when no interface has an IPv4 address.
    Q_INVOKABLE bool makeJoinCode();

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
    void browsingChanged();
    void nothingFoundReasonChanged();
    void joinCodeChanged();
    void rootAddressesChanged();

private:
    void reevaluate();
    void watchJoinRequests(QmlWorld *world);
    bool answer(int requestId, bool confirmed);
    void setErrorString(const QString &message);
    void watchDiscovery(QmlWorld *world);
    void noteGaveUp(const QString &step, const QString &reason);
    void updateNothingFoundReason();
    void updateJoinCode();
    void updateRootAddresses();
    // (Re)starts the browser when browsing and its transport or options are not the World's.
    void followBrowsingSettings();

    QPointer<QmlWorld> m_world;
    int m_wanted = 2;
    int m_joined = 0;
    bool m_ready = false;
    JoinRequestModel *m_pendingJoins;
    QString m_errorString;
    bool m_browsing = false;
    WorldBrowser *m_browser;
    QString m_browseTransport;
    QVariantMap m_browseOptions;
    WorldListModel *m_foundWorlds;
    QString m_browseError;
    QStringList m_gaveUp;
    QString m_nothingFoundReason;
    QString m_joinCode;
    QString m_joinCodeImage;
    QStringList m_rootAddresses; // the World's, as last reported
};

} // namespace mmpi
