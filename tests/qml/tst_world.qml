// Three in-process nodes, each a World (launched mode over the local
// transport) with a PlayerList, Lobby, Ticker and ParallelCanvas: they form;
// collectives from QML resolve on every node; every node sees the same
// ticks; a broadcast canvas shows the same picture everywhere (compared to
// QPainter); a node that dies is reported lost by the World, PlayerList
// and Lobby of the others.
import QtQuick
import QtTest
import MMPI
import "scenes.js" as Scenes

Item {
    id: top
    width: 700
    height: 200

    readonly property string address: "local://mmpi-qmltest-" + Math.floor(Math.random() * 0xfffffff).toString(16)
    property var nodes: []

    Component {
        id: nodeComponent
        Item {
            id: node
            property int index: 0
            property string address
            property alias world: w
            property alias players: pl
            property alias lobby: lb
            property alias ticker: tk
            property alias canvas: cv
            property var ticks: []
            property var lost: []
            property var playersLost: []
            property int allJoinedCount: 0
            width: 220
            height: 170

            World {
                id: w
                mode: World.Launched
                transport: "local"
                worldName: "qmltest"
                key: "not so secret"
                expectedSize: 3
                requestedRank: node.index
                rootAddress: node.address
                formationTimeout: 20000
                heartbeatInterval: 100
                heartbeatTimeout: 1000
                reconnectGracePeriod: 300
                onNodeLost: (rank, failureClass, reason) => node.lost.push(rank)
            }
            PlayerList {
                id: pl
                world: w
                localName: "player-" + node.index
                localColor: node.index === 1 ? "#ff8000" : "transparent"
                onPlayerLost: (rank, name) => node.playersLost.push(name)
            }
            Lobby {
                id: lb
                world: w
                wanted: 3
                onAllJoined: node.allJoinedCount++
            }
            Ticker {
                id: tk
                world: w
                interval: 20
                onTicked: tick => node.ticks.push(tick)
            }
            ParallelCanvas {
                id: cv
                world: w
                width: 160
                height: 120
                logicalSize: Qt.size(320, 240)
            }
        }
    }

    TestCase {
        name: "WorldOfThree"
        when: windowShown

        function forAll(f) {
            for (let i = 0; i < top.nodes.length; ++i)
                f(top.nodes[i], i)
        }

        // Starts `make(node)` on every node and waits for every result.
        function onAll(make) {
            const results = []
            forAll(n => make(n).then(r => results.push(r)))
            tryVerify(() => results.length === top.nodes.length, 15000)
            return results
        }

        function initTestCase() {
            const made = []
            for (let i = 0; i < 3; ++i)
                made.push(nodeComponent.createObject(top, {index: i, x: 230 * i, address: top.address}))
            top.nodes = made
            verify(!made[0].world.launched)
            compare(made[0].world.state, World.Idle)
            forAll(n => verify(n.world.start(), n.world.errorString))
            forAll(n => compare(n.world.state, World.Forming))
            verify(!made[0].world.start()) // once only
            verify(made[0].world.errorString.indexOf("already") >= 0)
        }

        function test_1_forms() {
            forAll((n, i) => {
                tryCompare(n.world, "state", World.Formed, 20000)
                compare(n.world.rank, i)
                compare(n.world.size, 3)
                compare(n.world.isRoot, i === 0)
                compare(n.world.nodes.count, 3)
                for (let r = 0; r < 3; ++r) {
                    compare(n.world.nodes.get(r).statusName, "Joined")
                    compare(n.world.nodes.get(r).self, r === i)
                }
            })
        }

        function test_2_lobbyIsReady() {
            forAll(n => {
                tryCompare(n.lobby, "ready", true, 5000)
                compare(n.lobby.joined, 3)
                compare(n.lobby.missing, 0)
                compare(n.allJoinedCount, 1)
            })
        }

        function test_3_playersAnnounceThemselves() {
            forAll((n, i) => {
                tryCompare(n.players, "announced", true, 10000)
                compare(n.players.count, 3)
                compare(n.players.active, 3)
                for (let r = 0; r < 3; ++r) {
                    const p = n.players.get(r)
                    compare(p.name, "player-" + r)
                    compare(p.statusName, "Joined")
                    compare(p.self, r === i)
                }
                compare(n.players.get(1).color, Qt.color("#ff8000"))
                compare(n.players.get(0).color, n.players.defaultColor(0))
                verify(!Qt.colorEqual(n.players.get(0).color, n.players.get(2).color))
            })
        }

        function test_4_collectivesFromQml() {
            for (const r of onAll(n => n.world.barrier()))
                verify(r.ok, r.error)
            const got = onAll(n => n.world.broadcast(n.world.rank === 1 ? {seed: 42, name: "x"} : null, 1))
            for (const r of got) {
                verify(r.ok, r.error)
                compare(r.value.seed, 42)
                compare(r.value.name, "x")
            }
        }

        function test_5_everyNodeSeesTheSameTicks() {
            forAll(n => verify(n.ticker.attached))
            top.nodes[0].ticker.running = true
            tryVerify(() => top.nodes.every(n => n.ticks.length >= 12), 10000)
            top.nodes[0].ticker.running = false
            const last = top.nodes[0].ticker.tick
            forAll(n => tryCompare(n.ticker, "tick", last, 5000))
            const expected = []
            for (let t = 1; t <= last; ++t)
                expected.push(t)
            let mine = 0
            forAll(n => {
                compare(n.ticks, expected)
                compare(n.ticker.turn, (last - 1) % 3)
                if (n.ticker.myTurn)
                    ++mine
            })
            compare(mine, 1)
        }

        function test_6_broadcastCanvasIsTheSameEverywhere() {
            forAll(n => verify(n.canvas.attached, n.canvas.errorString))
            verify(Scenes.basic(top.nodes[1].canvas))
            verify(top.nodes[1].canvas.endFrame())
            forAll(n => tryCompare(n.canvas, "frame", 1, 10000))
            const flips = onAll(n => n.canvas.flipTogether())
            for (const f of flips) {
                verify(f.ok, f.error)
                compare(f.frame, 1)
            }
            forAll(n => {
                tryVerify(() => n.canvas.framesShown > 0, 5000)
                const r = pixels.compareItem(n.canvas, "basic")
                verify(r.ok, "rank " + n.world.rank + ": " + r.message)
            })
        }

        function test_7_aChannelHasOneOwner() {
            const second = Qt.createQmlObject('import MMPI; ParallelCanvas { width: 10; height: 10 }', top)
            second.world = top.nodes[0].world
            verify(!second.attached)
            verify(second.errorString.indexOf("in use") >= 0, second.errorString)
            second.channel = 7
            second.world = null
            second.world = top.nodes[0].world
            verify(second.attached, second.errorString)
            second.destroy()
        }

        function test_8_lostNodeIsReported() {
            const victim = top.nodes[2]
            top.nodes = [top.nodes[0], top.nodes[1]]
            victim.destroy()
            forAll(n => {
                tryVerify(() => n.lost.indexOf(2) >= 0, 10000)
                compare(n.world.nodes.get(2).statusName, "Lost")
                compare(n.players.get(2).statusName, "Lost")
                compare(n.players.active, 2)
                compare(n.playersLost, ["player-2"])
                compare(n.world.joined, 2)
                compare(n.lobby.joined, 2)
                compare(n.lobby.missing, 1)
                compare(n.lobby.ready, false)
                compare(n.players.get(0).statusName, "Joined")
            })
        }

        function cleanupTestCase() {
            forAll(n => n.world.close())
            forAll(n => tryCompare(n.world, "state", World.Closed, 10000))
        }
    }
}
