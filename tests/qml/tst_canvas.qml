// ParallelCanvas without a world (a local scene): what it shows equals the
// same scene drawn with QPainter; bad input is refused with a reason;
// saveImage writes the picture; frames per second of a game-like scene.
import QtQuick
import QtTest
import MMPI
import "scenes.js" as Scenes

Item {
    id: top
    width: 360
    height: 280

    ParallelCanvas {
        id: canvas
        x: 20
        y: 10
        width: 320
        height: 240
        logicalSize: Qt.size(320, 240)
    }

    ParallelCanvas {
        id: big
        x: 0
        y: 0
        width: 640
        height: 480
        visible: false
        logicalSize: Qt.size(640, 480)
    }

    TestCase {
        name: "LocalCanvas"
        when: windowShown

        function test_1_attachesWithoutWorld() {
            verify(canvas.attached)
            compare(canvas.world, null)
            compare(canvas.frame, 0)
        }

        function test_2_screenshotMatchesQPainter() {
            const shown = canvas.framesShown
            verify(Scenes.basic(canvas), canvas.errorString)
            verify(canvas.endFrame(), canvas.errorString)
            compare(canvas.frame, 1)
            tryVerify(() => canvas.framesShown > shown, 5000)
            const r = pixels.compareItem(canvas, "basic")
            verify(r.ok, r.message)
            console.log("screenshot:", r.message)
        }

        function test_3_badInputIsRefused() {
            verify(!canvas.line(NaN, 0, 1, 1))
            verify(canvas.errorString.indexOf("not a usable coordinate") >= 0, canvas.errorString)
            verify(!canvas.line(40000, 0, 1, 1)) // beyond 16 bits: the encoder refuses
            verify(canvas.errorString.length > 0)
            verify(!canvas.fillRect(0, 0, -5, 10))
            verify(!canvas.polyline([[1, 2], "x"]))
            verify(canvas.errorString.indexOf("point 1") >= 0, canvas.errorString)
            verify(!canvas.setFont("", 0))
            verify(!canvas.setPen("red", -1))
            // Nothing refused went into the frame: the picture is unchanged.
            verify(canvas.endFrame())
            const r = pixels.compareItem(canvas, "basic")
            verify(r.ok, r.message)
        }

        // Only the new frame is rasterised on top of the kept picture; the
        // result is the same as drawing both frames from scratch.
        function test_3b_frameOnTopOfThePicture() {
            const shown = canvas.framesShown
            verify(Scenes.plus(canvas), canvas.errorString)
            verify(canvas.endFrame())
            tryVerify(() => canvas.framesShown > shown, 5000)
            const r = pixels.compareItem(canvas, "basicPlus")
            verify(r.ok, r.message)
            verify(!pixels.compareItem(canvas, "basic").ok)
            // saved from scratch (the scene's replay) the picture is the same
            const path = pixels.tempPath("plus.png")
            verify(canvas.saveImage(path, 320, 240), canvas.errorString)
            verify(pixels.compareFile(path, "basicPlus").ok)
            // back to the basic scene for the next test
            verify(Scenes.basic(canvas))
            verify(canvas.endFrame())
        }

        function test_4_saveImage() {
            const path = pixels.tempPath("basic.png")
            verify(canvas.saveImage(path, 640, 480), canvas.errorString)
            const r = pixels.compareFile(path, "basic")
            verify(r.ok, r.message)
            verify(!canvas.saveImage("/nonexistent-dir/x.png"))
        }

        function test_5_flipTogetherWithoutWorld() {
            let result = null
            canvas.flipTogether().then(r => result = r)
            tryVerify(() => result !== null, 5000)
            verify(result.ok, result.error)
            compare(result.frame, canvas.frame)
        }

        // A game scene: 300 primitives a frame (lines, rects, ellipses),
        // cleared each frame, at 640x480; every frame must be shown.
        function test_6_frameRate() {
            big.visible = true
            const r = pixels.measureFrameRate(big, 90, 300)
            verify(r.allShown)
            console.log("ParallelCanvas 640x480, 300 primitives/frame:", r.frames, "frames in",
                        r.seconds.toFixed(2), "s =", r.fps.toFixed(1), "frames/s")
            big.visible = false
        }
    }
}
