// Joins a person confirms, from QML: the root's Lobby lists each device
// that asks to join with the verification code that device shows
// (World.verificationCode(0)); confirm() lets one in and both ends show the
// same code in their node lists, reject() turns another away with the
// reason, and an answer to no open request is refused.
import QtQuick
import QtTest
import MMPI

Item {
    id: top
    readonly property string worldName: "qmlconfirm-" + Math.floor(Math.random() * 0xfffffff).toString(16)
    readonly property string address: "local://mmpi-qmlconfirm-" + Math.floor(Math.random() * 0xfffffff).toString(16)

    Component {
        id: worldComponent
        World {
            mode: World.Launched
            transport: "local"
            worldName: top.worldName
            key: "compare the digits"
            expectedSize: 2
            rootAddress: top.address
            formationTimeout: 20000
        }
    }

    TestCase {
        name: "ConfirmFromQml"

        function makeWorld(rank, properties) {
            const w = worldComponent.createObject(top, Object.assign({requestedRank: rank}, properties || {}))
            verify(w.start(), w.errorString)
            return w
        }

        function test_confirmThenReject() {
            const root = makeWorld(0, {confirmJoins: true, confirmTimeout: 15000})
            compare(root.confirmJoins, true)
            compare(root.confirmTimeout, 15000)
            const lobby = Qt.createQmlObject("import MMPI; Lobby {}", top)
            lobby.world = root
            compare(lobby.pendingJoins.count, 0)

            // A device that the person turns away fails, saying why.
            const intruder = makeWorld(1)
            tryCompare(lobby.pendingJoins, "count", 1, 20000)
            const refused = lobby.pendingJoins.get(0)
            compare(refused.nodeId.length > 0, true)
            tryVerify(() => intruder.verificationCode(0) !== "", 10000)
            compare(refused.verificationCode, intruder.verificationCode(0))
            verify(lobby.reject(refused.requestId), lobby.errorString)
            tryCompare(intruder, "state", World.Failed, 20000)
            verify(intruder.errorString.indexOf("rejected") >= 0, intruder.errorString)
            tryCompare(lobby.pendingJoins, "count", 0, 10000)
            compare(root.state, World.Forming)

            // One the person confirms joins, and both ends show its code.
            const member = makeWorld(1)
            tryCompare(lobby.pendingJoins, "count", 1, 20000)
            const request = lobby.pendingJoins.get(0)
            verify(request.requestId !== refused.requestId)
            tryVerify(() => member.verificationCode(0) !== "", 10000)
            compare(request.verificationCode, member.verificationCode(0))
            verify(/^\d{3} \d{3}$/.test(request.verificationCode), request.verificationCode)
            verify(lobby.confirm(request.requestId), lobby.errorString)
            tryCompare(root, "state", World.Formed, 20000)
            tryCompare(member, "state", World.Formed, 20000)
            tryCompare(lobby.pendingJoins, "count", 0, 10000)
            compare(root.nodes.get(1).verificationCode, request.verificationCode)
            compare(member.nodes.get(0).verificationCode, request.verificationCode)
            compare(root.nodes.get(0).verificationCode, "")

            // A settled request takes no answer.
            verify(!lobby.confirm(request.requestId))
            verify(lobby.errorString.indexOf("no join request") >= 0, lobby.errorString)
            verify(!lobby.reject(12345))
            root.close()
            member.close()
            tryCompare(root, "state", World.Closed, 10000)
        }

        function test_confirmJoinsNeedsAKey() {
            const open = worldComponent.createObject(top, {requestedRank: 0, key: "", confirmJoins: true})
            verify(!open.start())
            verify(open.errorString.indexOf("confirmJoins") >= 0, open.errorString)
        }
    }
}
