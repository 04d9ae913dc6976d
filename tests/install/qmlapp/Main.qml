import QtQuick
import QtQuick.Window
import MMPI

Window {
    width: 160; height: 120; visible: true
    // One picture, grabbed once: the handlers below may both see the moment.
    property bool drawn: false
    property bool grabbed: false

    function fail(message) {
        console.error("canvasapp: " + message)
        Qt.exit(1)
    }

    // Launched by mmpirun: the environment says where the world is.
    World {
        id: world
        autoStart: true
        onErrorOccurred: message => fail(message)
    }
    // Every node knows when all of them are here; the root draws then.
    Lobby {
        id: lobby
        world: world
        wanted: world.size
        onAllJoined: if (world.isRoot && canvas.attached) draw()
    }
    ParallelCanvas {
        id: canvas
        world: world
        anchors.fill: parent
        logicalSize: Qt.size(160, 120)
        onAttachedChanged: if (attached && world.isRoot && lobby.ready) draw()
        onErrorOccurred: message => fail(message)
        onFrameReady: frame => grabAndLeave()
    }

    function draw() {
        if (drawn)
            return
        drawn = true
        canvas.clear("navy")
        canvas.setBrush("gold")
        canvas.fillRect(20, 20, 60, 40)
        canvas.setPen("white", 3)
        canvas.line(0, 119, 159, 0)
        canvas.setBrush("crimson")
        canvas.ellipse(90, 60, 50, 40)
        canvas.endFrame()
    }

    // The item has the frame once the scene graph has drawn it.
    function grabAndLeave() {
        if (grabbed)
            return
        grabbed = true
        canvas.grabToImage(result => {
            const path = outDir + "/canvas-" + world.rank + ".png"
            if (!result.saveToFile(path))
                return fail("cannot write " + path)
            console.log("rank " + world.rank + " wrote " + path)
            // Nobody leaves before every picture is written.
            world.barrier().then(r => r.ok ? Qt.quit() : fail(r.error))
        })
    }
}
