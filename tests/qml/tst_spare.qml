// REBUILD with a spare from QML: two devices form a discovered world, one
// leaves, and a third device that only advertises the world (started late,
// given no rank or address) takes its rank when the other invites it. The
// players list shows the new node; an invitation with nothing to replace
// says why.
import QtQuick
import QtTest
import MMPI

Item {
    id: top
    readonly property string worldName: "qmlspare-" + Math.floor(Math.random() * 0xfffffff).toString(16)
    property var rejoined: []
    property var notFound: []

    World {
        id: root
        mode: World.Discovered
        transport: "local"
        worldName: top.worldName
        key: "spare key"
        expectedSize: 2
        requestedRank: 0
        discoveryTimeout: 3000
        formationTimeout: 20000
        onNodeRejoined: rank => top.rejoined.push(rank)
        onSpareNotFound: (rank, reason) => top.notFound.push([rank, reason])
    }
    World {
        id: leaver
        mode: World.Discovered
        transport: "local"
        worldName: top.worldName
        key: "spare key"
        expectedSize: 2
        requestedRank: -1
        formationTimeout: 20000
    }
    World {
        id: spare
        mode: World.Discovered
        transport: "local"
        worldName: top.worldName
        key: "spare key"
        expectedSize: 2
        requestedRank: -1
        formationTimeout: 20000
    }

    TestCase {
        name: "SpareFromQml"

        function test_spareTakesTheRankOfANodeThatLeft() {
            verify(leaver.start(), leaver.errorString)
            verify(root.start(), root.errorString)
            tryCompare(root, "state", World.Formed, 20000)
            tryCompare(leaver, "state", World.Formed, 20000)

            // Rank 1 is still there: nothing to replace.
            root.inviteSpare(1)
            tryVerify(() => top.notFound.length === 1, 10000)
            verify(top.notFound[0][1].indexOf("still a member") >= 0, top.notFound[0][1])

            leaver.close()
            tryCompare(leaver, "state", World.Closed, 10000)
            tryVerify(() => root.nodes.statusName(1) === "Left", 10000)

            verify(spare.start(), spare.errorString)
            root.inviteSpare(1)
            tryCompare(spare, "state", World.Formed, 20000)
            compare(spare.rank, 1)
            compare(spare.size, 2)
            verify(spare.replacement)
            verify(!root.replacement)
            tryVerify(() => top.rejoined.length === 1, 10000)
            compare(top.rejoined[0], 1)
            tryVerify(() => root.nodes.statusName(1) === "Joined", 10000)
            compare(root.nodes.get(1).nodeId, spare.nodes.get(1).nodeId)
            root.close()
            spare.close()
            tryCompare(root, "state", World.Closed, 10000)
        }
    }
}
