// Choosing a world from QML, over the tcp transport on loopback (world
// announcements and beacons to 127.0.0.1 only): a browsing Lobby lists the
// world a root announces with its name, host, counts and how it was found,
// follows its count, and pick() makes its World join it; the root's Lobby
// shows the join code and its QR image; and a Lobby says why nothing was
// found when its World's discovery steps give up.
import QtQuick
import QtTest
import MMPI

Item {
    id: top
    readonly property string worldName: "qmllobby-" + Math.floor(Math.random() * 0xfffffff).toString(16)
    readonly property int beaconPort: 40000 + Math.floor(Math.random() * 10000)
    readonly property var options: ({beaconPort: top.beaconPort, lobbyPort: top.beaconPort + 10000,
                                     beaconTargets: ["127.0.0.1"], interfaces: ["lo"], dnsSdBackend: "builtin",
                                     beaconInterval: 100})

    Component {
        id: worldComponent
        World {
            mode: World.Discovered
            transport: "tcp"
            transportOptions: top.options
            key: "pick me"
            formationTimeout: 20000
            discoveryTimeout: 20000
        }
    }
    Component {
        id: lobbyComponent
        Lobby {}
    }
    Image {
        id: qr
    }

    TestCase {
        name: "LobbyFromQml"

        function test_listPickAndJoin() {
            const root = worldComponent.createObject(top, {worldName: top.worldName, expectedSize: 3, requestedRank: 0})
            const rootLobby = lobbyComponent.createObject(top, {world: root})
            // The root's join code, for its interfaces and beacon port, and its QR image.
            compare(rootLobby.joinCode, "")
            compare(rootLobby.joinCodeImage, "")
            verify(rootLobby.makeJoinCode(), rootLobby.errorString)
            verify(/^[0-9A-Z]{4}(-[0-9A-Z]{1,4})+$/.test(rootLobby.joinCode), rootLobby.joinCode)
            compare(root.joinCode, rootLobby.joinCode)
            verify(rootLobby.joinCodeImage.startsWith("data:image/png;base64,"), rootLobby.joinCodeImage.slice(0, 40))
            qr.source = rootLobby.joinCodeImage
            tryCompare(qr, "status", Image.Ready, 5000)
            verify(qr.sourceSize.width >= 21 * 8 && qr.sourceSize.width === qr.sourceSize.height, qr.sourceSize)
            verify(root.start(), root.errorString)

            // A device that has chosen no world lists the root's ...
            const chooser = worldComponent.createObject(top, {worldName: ""})
            const lobby = lobbyComponent.createObject(top, {world: chooser})
            lobby.browsing = true
            verify(lobby.browsing, lobby.nothingFoundReason)
            compare(lobby.nothingFoundReason, "")
            tryCompare(lobby.foundWorlds, "count", 1, 10000)
            let row = lobby.foundWorlds.get(0)
            compare(row.name, top.worldName)
            compare(row.joined, 1)
            compare(row.wanted, 3)
            compare(row.foundBy, "Beacon")
            verify(row.host.length > 0)
            verify(row.addresses[0].startsWith("tcp://127.0.0.1:"), row.addresses)

            // ... sees a node join it ...
            const member = worldComponent.createObject(top, {worldName: top.worldName, expectedSize: 3, requestedRank: -1})
            verify(member.start(), member.errorString)
            tryVerify(() => lobby.foundWorlds.get(0).joined === 2, 10000, JSON.stringify(lobby.foundWorlds.get(0)))

            // ... and a person's pick joins it: the world of three forms.
            verify(!lobby.pick(5))
            verify(lobby.errorString.indexOf("no world in row 5") >= 0, lobby.errorString)
            verify(lobby.pick(0), lobby.errorString)
            compare(chooser.worldName, top.worldName)
            compare(chooser.expectedSize, 3)
            for (const w of [root, member, chooser])
                tryCompare(w, "state", World.Formed, 20000)
            compare(chooser.size, 3)
            // Formed, the root withdraws the world from the list.
            tryCompare(lobby.foundWorlds, "count", 0, 10000)
            lobby.browsing = false
            for (const w of [root, member, chooser])
                w.close()
            for (const w of [root, member, chooser])
                tryCompare(w, "state", World.Closed, 10000)
        }

        function test_saysWhyNothingWasFound() {
            // A node of a world nobody roots, over the beacon alone here.
            const lonely = worldComponent.createObject(top, {worldName: top.worldName + "-nobody", expectedSize: 2,
                                                             requestedRank: -1, beaconTimeout: 300})
            const lobby = lobbyComponent.createObject(top, {world: lonely})
            lobby.browsing = true
            verify(lonely.start(), lonely.errorString)
            tryVerify(() => lobby.nothingFoundReason.indexOf("Beacon: no root of world") >= 0, 10000,
                      lobby.nothingFoundReason)
            // DNS-SD could not even start on loopback: that is a reason too.
            verify(lobby.nothingFoundReason.indexOf("DnsSd: ") >= 0, lobby.nothingFoundReason)
            compare(lobby.foundWorlds.count, 0)
            lonely.close()
            tryCompare(lonely, "state", World.Closed, 10000)

            // A transport that announces no worlds says so at once.
            const local = worldComponent.createObject(top, {transport: "local", transportOptions: ({})})
            const other = lobbyComponent.createObject(top, {world: local})
            other.browsing = true
            verify(other.nothingFoundReason.indexOf("Browsing: transport local does not announce worlds") >= 0,
                   other.nothingFoundReason)
            // Given the World's transport later (a binding evaluated after
            // the Lobby's), it browses over that one.
            local.transport = "tcp"
            local.transportOptions = top.options
            compare(other.nothingFoundReason, "")
            verify(other.browsing)
        }
    }
}
