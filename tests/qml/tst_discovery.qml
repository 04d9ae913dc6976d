// Two in-process nodes form a discovered world over the local transport
// (a world name of their own): the root reports how its search went through
// World.discoveryProgress and the discovered* properties, for a lobby.
import QtQuick
import QtTest
import MMPI

Item {
    id: top
    readonly property string worldName: "qmldisc-" + Math.floor(Math.random() * 0xfffffff).toString(16)
    property var reports: []

    World {
        id: root
        mode: World.Discovered
        transport: "local"
        worldName: top.worldName
        key: "discovery key"
        expectedSize: 2
        requestedRank: 0
        formationTimeout: 20000
        onDiscoveryProgress: (devices, nodes, secondsLeft) => top.reports.push([devices, nodes, secondsLeft])
    }
    World {
        id: node
        mode: World.Discovered
        transport: "local"
        worldName: top.worldName
        key: "discovery key"
        expectedSize: 2
        requestedRank: -1
        formationTimeout: 20000
    }

    TestCase {
        name: "DiscoveredWorld"

        function test_rootReportsItsSearch() {
            compare(root.discoveredNodes, 0)
            verify(node.start(), node.errorString)
            verify(root.start(), root.errorString)
            tryCompare(root, "state", World.Formed, 20000)
            tryCompare(node, "state", World.Formed, 20000)
            compare(root.size, 2)
            verify(top.reports.length >= 1)
            const last = top.reports[top.reports.length - 1]
            verify(last[0] >= last[1])
            compare(last[2], -1) // the local transport has no search round
            compare(root.discoveredNodes, last[1])
            compare(root.discoveredDevices, last[0])
            compare(root.discoverySecondsLeft, -1)
            verify(top.reports.some(r => r[1] === 1), JSON.stringify(top.reports))
            compare(node.discoveredNodes, 0) // only a root searches
            root.close()
            node.close()
            tryCompare(root, "state", World.Closed, 10000)
        }
    }
}
