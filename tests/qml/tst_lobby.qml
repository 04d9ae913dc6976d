// Choosing a world from QML, over the tcp transport on loopback (world
// announcements and beacons to 127.0.0.1 only): a browsing Lobby lists the
// world a root announces with its name, host, counts and how it was found,
// follows its count, and pick() makes its World join it; the root's Lobby
// shows the join code and its QR image; a Lobby says why nothing was
// found when its World's discovery steps give up; and the root's address a
// person types into a Lobby is its World's, and forms the world where the
// beacon does not reach the root.
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
    Component {
        id: spyComponent
        SignalSpy {}
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
    
        function test_typedRootAddress() {
            const root = worldComponent.createObject(top, {worldName: top.worldName + "-typed", expectedSize: 2,
                                                           requestedRank: 0})
            // A node whose beacon goes to another port than the root's: only
            // the address typed with the root's port reaches it.
            const node = worldComponent.createObject(top, {
                worldName: top.worldName + "-typed", expectedSize: 2, requestedRank: -1, beaconTimeout: 300,
                transportOptions: Object.assign({}, top.options, {beaconPort: top.beaconPort + 1})})
            const lobby = lobbyComponent.createObject(top, {world: node})
            const changed = spyComponent.createObject(top, {target: lobby, signalName: "rootAddressesChanged"})
            compare(lobby.rootAddresses, [])

            // What a person typed into one field: split into the World's list.
            lobby.rootAddresses = "localhost:" + top.beaconPort + ", 127.0.0.1:" + top.beaconPort
            compare(lobby.errorString, "")
            compare(node.rootAddresses, ["localhost:" + top.beaconPort, "127.0.0.1:" + top.beaconPort])
            compare(lobby.rootAddresses, node.rootAddresses)
            compare(changed.count, 1)
            // A typo is named at once, kept for the person to correct, and start() refuses it.
            lobby.rootAddresses = ["10.0.1"]
            verify(lobby.errorString.indexOf("root address '10.0.1' is not an IPv4 address") >= 0, lobby.errorString)
            compare(node.rootAddresses, ["10.0.1"])
            verify(!node.start())
            verify(node.errorString.indexOf("'10.0.1' is not an IPv4 address") >= 0, node.errorString)
            // Set on the World, the Lobby follows.
            node.rootAddresses = ["127.0.0.1:" + top.beaconPort]
            compare(lobby.rootAddresses, ["127.0.0.1:" + top.beaconPort])
            compare(changed.count, 3)

            const fresh = worldComponent.createObject(top, {
                worldName: top.worldName + "-typed", expectedSize: 2, requestedRank: -1, beaconTimeout: 300,
                transportOptions: node.transportOptions})
            const typing = lobbyComponent.createObject(top, {world: fresh})
            typing.rootAddresses = ["127.0.0.1:" + top.beaconPort]
            compare(typing.errorString, "")
            const started = spyComponent.createObject(top, {target: fresh, signalName: "discoveryStepStarted"})
            const gaveUp = spyComponent.createObject(top, {target: fresh, signalName: "discoveryStepGaveUp"})
            verify(root.start(), root.errorString)
            verify(fresh.start(), fresh.errorString)
            for (const w of [root, fresh])
                tryCompare(w, "state", World.Formed, 20000)
            compare(fresh.size, 2)
            // The beacon gave up (another port) and the typed address formed it.
            const gaveUpSteps = gaveUp.signalArguments.map(args => args[0])
            verify(gaveUpSteps.indexOf("Beacon") >= 0, JSON.stringify(gaveUp.signalArguments))
            verify(gaveUpSteps.indexOf("Address") < 0, JSON.stringify(gaveUp.signalArguments))
            compare(started.signalArguments[started.count - 1][0], "Address")
            for (const w of [root, fresh])
                w.close()
            for (const w of [root, fresh])
                tryCompare(w, "state", World.Closed, 10000)
        }
    }
}
