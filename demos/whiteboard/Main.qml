// The whiteboard's window: a shared ParallelCanvas every device draws on
// (each stroke leaves as polyline frames while the finger moves), the pen
// picker, Clear, Save PNG and the players. In headless mode (host.scripted)
// the same window plays this device's script, waits for every device's
// strokes (flipTogether) and saves the board.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import MMPI

ApplicationWindow {
    id: win
    width: 1100
    height: 680
    visible: true
    title: world.state === World.Formed
           ? qsTr("MMPI whiteboard — device %1 of %2").arg(world.rank).arg(world.size)
           : qsTr("MMPI whiteboard")

    readonly property color myColor: world.state === World.Formed ? players.defaultColor(world.rank) : "black"
    property color penColor: myColor
    property bool penIsMine: true
    property int penWidth: 6
    // The root's first clear is on the board and every device is past the
    // barrier that follows it: strokes from now on cannot be wiped by it.
    property bool ready: false
    // With --attach-delay only the root opens the board at once; the
    // others create their canvas later (a canvas without a world would be
    // a local one, hence the Loader).
    property bool boardOpen: host.attachDelay === 0
    readonly property var canvas: canvasLoader.item
    // For the canvas inside the Loader, where `world` would be its own property.
    readonly property World boardWorld: world
    property string status: qsTr("forming the world…")
    property int firstFrame: 0

    onMyColorChanged: if (penIsMine) penColor = myColor
    // Leave with goodbyes, so the others see this device as left, not lost.
    onClosing: close => {
        if (world.state === World.Formed && !session.finishing) {
            close.accepted = false
            session.finishing = true
            world.close()
        }
    }

    World {
        id: world
        mode: host.alone ? World.Launched : (host.discovered ? World.Discovered : World.Auto)
        transport: host.alone ? "local" : host.transport
        transportOptions: host.transportOptions
        rootAddress: host.alone ? host.aloneAddress : ""
        worldName: host.worldName
        key: host.key
        expectedSize: host.size
        requestedRank: host.host ? 0 : -1
        // A device that chooses starts once a world is picked (chooser.pick).
        autoStart: !host.choose
        onFormed: session.begin()
        onFormationProgress: (joined, expected) => win.status = qsTr("%1 of %2 devices here").arg(joined).arg(expected)
        onStateChanged: state => {
            if (session.finishing && (state === World.Closed || state === World.Failed))
                host.finish(session.finishStatus)
            else if (state === World.Failed)
                session.fail(qsTr("the world failed: %1").arg(errorString))
        }
        onNodeLost: (rank, failureClass, reason) => {
            if (!session.finishing)
                win.status = qsTr("device %1 is gone: %2").arg(rank).arg(reason)
        }
    }

    // --choose: the worlds announced nearby, until one is picked.
    Lobby {
        id: chooser
        world: world
        browsing: host.choose && world.state === World.Idle
    }
    Connections {
        target: chooser.foundWorlds
        enabled: host.scripted && host.choose
        function onCountChanged() {
            if (chooser.foundWorlds.count > 0 && world.state === World.Idle && !chooser.pick(0))
                session.fail(qsTr("cannot join %1: %2").arg(chooser.foundWorlds.get(0).name).arg(chooser.errorString))
        }
    }

    PlayerList {
        id: players
        world: world
        localName: host.playerName
    }

    // ---------------------------------------------------------------- drawing

    function toLogical(x, y) {
        return [Math.max(0, Math.min(host.board.width - 1, Math.round(x * host.board.width / paper.width))),
                Math.max(0, Math.min(host.board.height - 1, Math.round(y * host.board.height / paper.height)))]
    }

    // One frame: the pen, then a polyline through `points` ([x, y] in the
    // board's space), or a dot for a single point.
    function sendStroke(points) {
        if (points.length === 1) {
            canvas.setPen(penColor, 1)
            canvas.setBrush(penColor)
            canvas.ellipse(points[0][0] - penWidth / 2, points[0][1] - penWidth / 2, penWidth, penWidth)
            canvas.setBrush("transparent")
        } else {
            canvas.setPen(penColor, penWidth)
            canvas.polyline(points)
        }
        if (!canvas.endFrame())
            win.status = canvas.errorString
    }

    function clearBoard() {
        canvas.clear("white")
        canvas.endFrame()
    }

    function saveBoard(path) {
        const file = host.expand(path, world.rank)
        if (!host.makeFolderFor(file)) {
            win.status = qsTr("cannot create the folder of %1").arg(file)
            return false
        }
        if (!canvas.saveImage(file)) {
            win.status = canvas.errorString
            return false
        }
        win.status = qsTr("saved %1").arg(file)
        return true
    }

    // ---------------------------------------------------------------- session

    QtObject {
        id: session
        property bool finishing: false
        property int finishStatus: 0
        property var steps: []
        property int step: 0
        property int point: 0
        property int strokes: 0

        function fail(message) {
            win.status = message
            if (host.scripted && !finishing) {
                finishing = true
                host.fail(message)
            }
        }

        function begin() {
            if (world.isRoot) {
                win.boardOpen = true
                win.clearBoard()
            }
            world.barrier().then(r => {
                if (!r.ok)
                    return fail(qsTr("barrier: %1").arg(r.error))
                win.ready = true
                win.status = qsTr("ready: draw!")
                if (host.scripted)
                    startScript()
            })
        }

        // With --attach-delay the root draws first; the others open the
        // board only once it has (the barrier), then after the delay: their
        // canvases start from the root's replay.
        function startScript() {
            const loaded = host.loadScript(world.rank)
            if (!loaded.ok)
                return fail(loaded.error)
            steps = loaded.steps
            strokes = loaded.strokes
            if (host.attachDelay === 0 || world.isRoot) {
                player.start()
                return
            }
            world.barrier().then(r => {
                if (!r.ok)
                    return fail(qsTr("barrier: %1").arg(r.error))
                lateOpen.start()
            })
        }

        // One step a tick; strokes point by point, as a finger moves.
        function playNext() {
            if (step >= steps.length) {
                player.stop()
                return scriptDone()
            }
            const s = steps[step]
            if (s.kind === "pen") {
                win.penIsMine = s.color === ""
                win.penColor = win.penIsMine ? win.myColor : s.color
                win.penWidth = s.width
                ++step
            } else if (s.kind === "clear") {
                canvas.clear(s.color)
                canvas.endFrame()
                ++step
            } else {
                // As a finger: down on the first point, one move a tick,
                // up on the last; the board's flusher sends the frames.
                const p = s.points[point]
                const at = paper.mapToItem(null, p[0] * paper.width / host.board.width,
                                           p[1] * paper.height / host.board.height)
                if (point === 0 && !host.touch(win, 0, at.x, at.y))
                    return fail(qsTr("the board did not take the stroke at %1,%2").arg(p[0]).arg(p[1]))
                if (point > 0)
                    host.touch(win, 1, at.x, at.y)
                if (point === s.points.length - 1) {
                    host.touch(win, 2, at.x, at.y)
                    point = 0
                    ++step
                } else {
                    ++point
                }
            }
        }

        function scriptDone() {
            if (host.attachDelay > 0 && world.isRoot) {
                // The others wait for this before they open their boards.
                world.barrier().then(r => r.ok ? flip() : fail(qsTr("barrier: %1").arg(r.error)))
                return
            }
            flip()
        }

        function flip() {
            canvas.flipTogether().then(r => {
                if (!r.ok)
                    return fail(qsTr("flipTogether: %1").arg(r.error))
                const out = host.outPath(world.rank)
                if (!win.saveBoard(out))
                    return fail(win.status)
                const shot = host.screenshotPath(world.rank)
                if (shot !== "" && !host.grabWindow(win, shot))
                    return fail(qsTr("cannot write the screenshot %1").arg(shot))
                host.report("whiteboard rank=%1 size=%2 color=%3 strokes=%4 frame=%5 firstFrame=%6 out=%7"
                            .arg(world.rank).arg(world.size).arg(win.myColor).arg(strokes).arg(r.frame)
                            .arg(win.firstFrame).arg(out))
                // Nobody leaves before every device has its board saved: the
                // root relays until then.
                world.barrier().then(b => {
                    if (!b.ok)
                        return fail(qsTr("last barrier: %1").arg(b.error))
                    finishing = true
                    world.close()
                })
            })
        }
    }

    Timer {
        id: player
        interval: 5
        repeat: true
        onTriggered: session.playNext()
    }
    Timer {
        id: lateOpen
        interval: host.attachDelay
        onTriggered: win.boardOpen = true
    }
    Connections {
        target: canvasLoader
        enabled: host.attachDelay > 0
        function onLoaded() {
            if (!world.isRoot)
                player.start()
        }
    }
    Timer {
        interval: host.timeoutMs
        running: host.scripted
        onTriggered: session.fail(qsTr("timed out after %1 ms (world %2, frame %3)")
                                  .arg(host.timeoutMs).arg(world.state).arg(canvas ? canvas.frame : 0))
    }

    // ---------------------------------------------------------------- layout

    RowLayout {
        anchors.fill: parent
        anchors.margins: 8
        spacing: 8

        ColumnLayout {
            Layout.preferredWidth: 250
            Layout.maximumWidth: 250
            Layout.fillHeight: true
            spacing: 6

            Label {
                text: world.state === World.Formed
                      ? qsTr("Device %1 of %2 · frame %3").arg(world.rank).arg(world.size).arg(canvas ? canvas.frame : 0)
                      : qsTr("World: %1").arg(["idle", "forming", "formed", "closing", "closed", "failed"][world.state])
                font.bold: true
            }
            Label {
                Layout.fillWidth: true
                text: win.status
                wrapMode: Text.Wrap
                elide: Text.ElideRight
                maximumLineCount: 3
            }

            // The lobby of a device that chooses its world.
            ColumnLayout {
                objectName: "worldsNearby"
                visible: host.choose && world.state === World.Idle
                Layout.fillWidth: true
                Label { text: qsTr("Worlds nearby"); font.bold: true }
                Repeater {
                    model: chooser.foundWorlds
                    delegate: Button {
                        required property int index
                        required property string name
                        required property string host
                        required property int joined
                        required property int wanted
                        Layout.fillWidth: true
                        text: qsTr("%1 on %2 · %3 of %4").arg(name).arg(host).arg(joined).arg(wanted)
                        onClicked: if (!chooser.pick(index)) win.status = chooser.errorString
                    }
                }
                Label {
                    Layout.fillWidth: true
                    visible: chooser.foundWorlds.count === 0
                    text: chooser.nothingFoundReason !== "" ? chooser.nothingFoundReason : qsTr("looking…")
                    wrapMode: Text.Wrap
                }
            }

            Label { text: qsTr("Pen") }
            Flow {
                Layout.fillWidth: true
                spacing: 4
                Repeater {
                    model: ["mine", "#000000", "#e53935", "#fb8c00", "#fdd835", "#43a047", "#1e88e5", "#8e24aa", "#ffffff"]
                    delegate: Rectangle {
                        required property string modelData
                        readonly property color swatch: modelData === "mine" ? win.myColor : modelData
                        readonly property bool chosen: modelData === "mine" ? win.penIsMine
                                                                            : (!win.penIsMine && Qt.colorEqual(win.penColor, swatch))
                        width: 26
                        height: 26
                        radius: 13
                        color: swatch
                        border.width: chosen ? 3 : 1
                        border.color: chosen ? "#202020" : "#a0a0a0"
                        Text {
                            anchors.centerIn: parent
                            visible: parent.modelData === "mine"
                            text: "★"
                            color: "white"
                        }
                        MouseArea {
                            anchors.fill: parent
                            onClicked: {
                                win.penIsMine = parent.modelData === "mine"
                                win.penColor = parent.swatch
                            }
                        }
                    }
                }
            }
            RowLayout {
                Layout.fillWidth: true
                Slider {
                    id: widthSlider
                    Layout.fillWidth: true
                    from: 1
                    to: 40
                    stepSize: 1
                    value: win.penWidth
                    onMoved: win.penWidth = value
                }
                Rectangle {
                    width: 40
                    height: 40
                    color: "transparent"
                    Rectangle {
                        anchors.centerIn: parent
                        width: win.penWidth
                        height: win.penWidth
                        radius: win.penWidth / 2
                        color: win.penColor
                        border.width: 1
                        border.color: "#a0a0a0"
                    }
                }
            }

            Button {
                Layout.fillWidth: true
                text: qsTr("Clear for everyone")
                enabled: win.ready && canvas !== null && canvas.attached
                onClicked: win.clearBoard()
            }
            TextField {
                id: savePath
                Layout.fillWidth: true
                text: host.savePath
                selectByMouse: true
            }
            Button {
                Layout.fillWidth: true
                text: qsTr("Save PNG")
                enabled: canvas !== null && canvas.attached
                onClicked: win.saveBoard(savePath.text)
            }

            Label { text: qsTr("Players (%1)").arg(players.active) }
            ListView {
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                model: players
                delegate: RowLayout {
                    required property int rank
                    required property string name
                    required property color color
                    required property int status
                    required property bool self
                    width: ListView.view.width
                    opacity: status === PlayerList.Lost ? 0.4 : 1
                    Rectangle { width: 14; height: 14; radius: 7; color: parent.color }
                    Label {
                        Layout.fillWidth: true
                        elide: Text.ElideRight
                        text: name + (self ? qsTr(" (you)") : "")
                              + (status === PlayerList.Suspect ? qsTr(" · out of reach")
                                                               : status === PlayerList.Lost ? qsTr(" · gone") : "")
                    }
                }
            }
        }

        // The board keeps the canvas's aspect ratio inside whatever room it has.
        Item {
            id: boardArea
            Layout.fillWidth: true
            Layout.fillHeight: true

            Rectangle {
                id: paper
                readonly property real scale: Math.min(boardArea.width / host.board.width,
                                                       boardArea.height / host.board.height)
                anchors.centerIn: parent
                width: host.board.width * scale
                height: host.board.height * scale
                color: "white"
                border.color: "#b0b0b0"

                Loader {
                    id: canvasLoader
                    anchors.fill: parent
                    active: win.boardOpen
                    sourceComponent: ParallelCanvas {
                        world: win.boardWorld
                        logicalSize: host.board
                        onFrameReady: frame => { if (win.firstFrame === 0) win.firstFrame = frame }
                        onErrorOccurred: message => win.status = message
                    }
                }

                // Each finger (or the mouse) draws its own stroke; its points
                // go out every flush as one polyline continuing the last one.
                MultiPointTouchArea {
                    id: touch
                    anchors.fill: parent
                    enabled: win.ready && canvas !== null && canvas.attached
                    maximumTouchPoints: 5
                    property var strokes: ({})

                    function add(tp, ending) {
                        const s = strokes[tp.pointId]
                        if (!s)
                            return
                        const p = win.toLogical(tp.x, tp.y)
                        const tail = s.pending.length ? s.pending[s.pending.length - 1] : s.sent
                        if (p[0] !== tail[0] || p[1] !== tail[1]) {
                            s.pending.push(p)
                            s.moved = true
                        }
                        if (ending) {
                            flushOne(s, true)
                            delete strokes[tp.pointId]
                        }
                    }
                    function flushOne(s, ending) {
                        if (s.pending.length > 0) {
                            win.sendStroke([s.sent].concat(s.pending))
                            s.sent = s.pending[s.pending.length - 1]
                            s.pending = []
                        } else if (ending && !s.moved) {
                            win.sendStroke([s.sent])
                        }
                    }
                    function flushAll() {
                        for (const id in strokes)
                            flushOne(strokes[id], false)
                    }

                    onPressed: touchPoints => {
                        for (const tp of touchPoints)
                            strokes[tp.pointId] = { sent: win.toLogical(tp.x, tp.y), pending: [], moved: false }
                        flusher.start()
                    }
                    onUpdated: touchPoints => { for (const tp of touchPoints) add(tp, false) }
                    onReleased: touchPoints => { for (const tp of touchPoints) add(tp, true) }
                    onCanceled: touchPoints => { for (const tp of touchPoints) add(tp, true) }
                }
                Timer {
                    id: flusher
                    interval: 30
                    repeat: true
                    onTriggered: {
                        touch.flushAll()
                        if (Object.keys(touch.strokes).length === 0)
                            stop()
                    }
                }
            }
        }
    }
}
