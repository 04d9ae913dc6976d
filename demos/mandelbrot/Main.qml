// The Mandelbrot window: the picture every node shares, filling in band by
// band; wheel or pinch zooms, a drag pans, on any node, and the root renders
// the new view across the world. `mandelbrot` is the app's SharedRender.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Mandelbrot

ApplicationWindow {
    id: window
    visible: true
    width: 960
    height: 680
    title: qsTr("MMPI Mandelbrot — node %1 of %2").arg(mandelbrot.rank).arg(mandelbrot.nodes)

    header: ToolBar {
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 8
            anchors.rightMargin: 8
            spacing: 12
            Label {
                text: qsTr("node %1 / %2").arg(mandelbrot.rank).arg(mandelbrot.nodes)
                font.bold: true
            }
            ProgressBar {
                objectName: "progress"
                Layout.fillWidth: true
                from: 0
                to: Math.max(1, mandelbrot.total)
                value: mandelbrot.done
            }
            Label { text: qsTr("%1/%2 bands").arg(mandelbrot.done).arg(mandelbrot.total) }
            CheckBox {
                objectName: "tint"
                text: qsTr("Tint by node")
                checked: mandelbrot.tint
                // The root decides: show what it says, not the click.
                onToggled: {
                    mandelbrot.setTint(checked)
                    checked = Qt.binding(() => mandelbrot.tint)
                }
            }
            Button {
                text: qsTr("Reset view")
                onClicked: mandelbrot.resetView()
            }
        }
    }

    footer: Label {
        padding: 6
        text: mandelbrot.viewText + qsTr("  ·  wheel or pinch: zoom, drag: pan")
    }

    MandelbrotPicture {
        id: picture
        objectName: "picture"
        anchors.fill: parent
        session: mandelbrot

        PinchArea {
            anchors.fill: parent
            onPinchFinished: pinch => {
                const p = picture.toPicture(pinch.center.x, pinch.center.y)
                if (pinch.scale > 0)
                    mandelbrot.zoomAt(p.x, p.y, pinch.scale)
            }

            MouseArea {
                anchors.fill: parent
                property point pressedAt
                onPressed: mouse => pressedAt = Qt.point(mouse.x, mouse.y)
                onPositionChanged: mouse => picture.shift = Qt.point(mouse.x - pressedAt.x, mouse.y - pressedAt.y)
                onReleased: mouse => {
                    const r = picture.pictureRect
                    const dx = (mouse.x - pressedAt.x) / r.width
                    const dy = (mouse.y - pressedAt.y) / r.height
                    picture.shift = Qt.point(0, 0)
                    if (Math.abs(dx) > 0.002 || Math.abs(dy) > 0.002)
                        mandelbrot.pan(dx, dy)
                }
                onWheel: wheel => {
                    const p = picture.toPicture(wheel.x, wheel.y)
                    mandelbrot.zoomAt(p.x, p.y, Math.pow(1.25, wheel.angleDelta.y / 120))
                }
            }
        }
    }
}
