// The game's window: the lobby (the games nearby to pick from, when this
// device chooses, then the players joined) until every player is here, then the arena
// (GameBoard), the score list, touch buttons and a banner for what happens
// to the other players. All state comes from the GameController.
import QtQuick
import QtQuick.Window
import MMPIGame

Window {
    id: win
    required property GameController controller
    readonly property bool choosing: controller.phase === GameController.Choosing
    readonly property bool inLobby: controller.phase === GameController.Idle
                                    || controller.phase === GameController.Choosing
                                    || controller.phase === GameController.Forming
                                    || controller.phase === GameController.Starting
                                    || (controller.phase === GameController.Failed && controller.tick === 0)

    width: 980
    height: 640
    visible: true
    color: "#0b0e14"
    title: controller.player >= 0 ? qsTr("MMPI light cycles — player %1").arg(controller.player)
                                  : qsTr("MMPI light cycles")

    Connections {
        target: win.controller
        function onPhaseChanged() {
            if (win.controller.phase === GameController.Playing)
                board.forceActiveFocus()
        }
    }

    // ---- lobby
    Column {
        id: lobby
        objectName: "lobby"
        visible: win.inLobby
        anchors.centerIn: parent
        spacing: 18

        Text {
            anchors.horizontalCenter: parent.horizontalCenter
            text: qsTr("MMPI light cycles")
            color: "white"
            font.pixelSize: 34
            font.bold: true
        }
        Text {
            objectName: "lobbyStatus"
            anchors.horizontalCenter: parent.horizontalCenter
            color: win.controller.phase === GameController.Failed ? "#ff5370" : "#c8d3f5"
            font.pixelSize: 20
            text: {
                switch (win.controller.phase) {
                case GameController.Failed: return win.controller.errorString
                case GameController.Choosing: return qsTr("Games nearby: pick one to join")
                case GameController.Starting: return qsTr("All %1 players are here: starting").arg(win.controller.expected)
                default: return qsTr("Waiting for %1 players").arg(win.controller.expected)
                }
            }
        }
        Column {
            objectName: "gamesNearby"
            visible: win.choosing
            anchors.horizontalCenter: parent.horizontalCenter
            spacing: 8
            Repeater {
                model: win.controller.gamesNearby
                Rectangle {
                    required property int index
                    required property string name
                    required property string host
                    required property int joined
                    required property int wanted
                    objectName: "game" + index
                    width: 420; height: 48; radius: 8
                    color: pick.pressed ? "#3a4466" : "#1b1f2b"
                    border.color: "#82aaff"
                    Text {
                        anchors.centerIn: parent
                        color: "white"
                        font.pixelSize: 17
                        text: qsTr("%1 on %2 · %3 of %4 players").arg(parent.name)
                                  .arg(parent.host !== "" ? parent.host : qsTr("a device nearby"))
                                  .arg(parent.joined).arg(parent.wanted)
                    }
                    MouseArea {
                        id: pick
                        anchors.fill: parent
                        onClicked: win.controller.join(parent.index)
                    }
                }
            }
            Text {
                objectName: "nothingFound"
                visible: win.controller.gamesNearby.count === 0 || win.controller.nothingFoundReason !== ""
                width: 420
                wrapMode: Text.Wrap
                horizontalAlignment: Text.AlignHCenter
                color: "#7a88b8"
                font.pixelSize: 16
                text: win.controller.nothingFoundReason !== ""
                      ? win.controller.nothingFoundReason
                      : qsTr("Looking for games… (the host starts with --host)")
            }
        }
        Row {
            visible: !win.choosing
            anchors.horizontalCenter: parent.horizontalCenter
            spacing: 12
            Repeater {
                model: win.controller.expected
                Rectangle {
                    required property int index
                    width: 30; height: 30; radius: 15
                    color: index < win.controller.joined ? "#82aaff" : "transparent"
                    border.color: "#82aaff"
                    border.width: 2
                }
            }
        }
        Text {
            visible: !win.choosing
            anchors.horizontalCenter: parent.horizontalCenter
            color: "#7a88b8"
            font.pixelSize: 16
            text: qsTr("%1 of %2 joined").arg(win.controller.joined).arg(win.controller.expected)
        }
    }

    // ---- the game
    Item {
        id: game
        visible: !win.inLobby
        anchors.fill: parent

        GameBoard {
            id: board
            objectName: "board"
            controller: win.controller
            focus: true
            anchors { left: parent.left; top: parent.top; bottom: parent.bottom; right: side.left; margins: 12 }

            // Swipes steer too (touch screens); a tap just takes the keyboard focus.
            MouseArea {
                anchors.fill: parent
                property point from
                onPressed: mouse => { from = Qt.point(mouse.x, mouse.y); board.forceActiveFocus() }
                onReleased: mouse => {
                    const dx = mouse.x - from.x, dy = mouse.y - from.y
                    if (Math.max(Math.abs(dx), Math.abs(dy)) < 24)
                        return
                    if (Math.abs(dx) > Math.abs(dy))
                        win.controller.steer(dx > 0 ? 1 : 3)
                    else
                        win.controller.steer(dy > 0 ? 2 : 0)
                }
            }

            Rectangle {
                id: banner
                objectName: "banner"
                visible: win.controller.banner !== ""
                anchors { horizontalCenter: parent.horizontalCenter; top: parent.top; topMargin: 16 }
                width: bannerText.implicitWidth + 36
                height: bannerText.implicitHeight + 18
                radius: 8
                color: "#dd1b1f2b"
                border.color: "#82aaff"
                Text {
                    id: bannerText
                    anchors.centerIn: parent
                    text: win.controller.banner
                    color: "white"
                    font.pixelSize: 20
                }
            }
        }

        Column {
            id: side
            width: 270
            anchors { right: parent.right; top: parent.top; bottom: parent.bottom; margins: 12 }
            spacing: 10

            Row {
                spacing: 10
                Rectangle {
                    width: 22; height: 22; radius: 4
                    anchors.verticalCenter: parent.verticalCenter
                    color: win.controller.colorOf(win.controller.player)
                    border.color: "white"; border.width: 2
                }
                Text {
                    color: "white"
                    font.pixelSize: 20
                    font.bold: true
                    text: (win.controller.bot ? qsTr("Bot: player %1") : qsTr("You: player %1")).arg(win.controller.player)
                }
            }
            Text {
                color: "#7a88b8"
                font.pixelSize: 15
                text: qsTr("Round %1 · tick %2 · %3 players").arg(win.controller.round).arg(win.controller.tick)
                          .arg(win.controller.playerCount)
            }
            Text {
                visible: win.controller.phase === GameController.Playing && !win.controller.alive
                color: "#ffcb6b"
                font.pixelSize: 15
                text: qsTr("Crashed: back next round")
            }
            Text { text: qsTr("Scores"); color: "#c8d3f5"; font.pixelSize: 17; font.bold: true; topPadding: 6 }
            ListView {
                objectName: "scores"
                width: parent.width
                height: count * 30
                interactive: false
                model: win.controller.players
                delegate: Row {
                    required property int player
                    required property color color
                    required property int score
                    required property string statusName
                    required property bool self
                    height: 30
                    spacing: 10
                    opacity: statusName === "removed" ? 0.45 : 1
                    Rectangle {
                        width: 16; height: 16; radius: 3
                        anchors.verticalCenter: parent.verticalCenter
                        color: statusName === "frozen" ? "#b0b0b0" : parent.color
                        border.color: "white"; border.width: parent.self ? 2 : 0
                    }
                    Text { width: 92; text: qsTr("Player %1").arg(parent.player); color: "white"; font.pixelSize: 16; font.bold: parent.self }
                    Text { width: 36; text: parent.score; color: "white"; font.pixelSize: 16; horizontalAlignment: Text.AlignRight }
                    Text {
                        text: parent.statusName
                        font.pixelSize: 15
                        color: parent.statusName === "joined" ? "#c3e88d" : parent.statusName === "frozen" ? "#b0b0b0" : "#ff5370"
                    }
                }
            }
        }

        // Touch buttons: a cross of arrows under the scores.
        Item {
            id: pad
            visible: !win.controller.bot
            width: 3 * 64 + 2 * 6
            height: width
            anchors { horizontalCenter: side.horizontalCenter; bottom: parent.bottom; bottomMargin: 16 }
            Repeater {
                // heading, column, row, arrow
                model: [[0, 1, 0, "▲"], [1, 2, 1, "▶"], [2, 1, 2, "▼"], [3, 0, 1, "◀"]]
                Rectangle {
                    required property var modelData
                    objectName: "steer" + modelData[0]
                    x: modelData[1] * 70
                    y: modelData[2] * 70
                    width: 64; height: 64; radius: 10
                    color: tap.pressed ? "#3a4466" : (win.controller.heading === modelData[0] ? "#2a3350" : "#1b1f2b")
                    border.color: "#82aaff"
                    Text { anchors.centerIn: parent; text: parent.modelData[3]; color: "white"; font.pixelSize: 26 }
                    MouseArea {
                        id: tap
                        anchors.fill: parent
                        onPressed: win.controller.steer(parent.modelData[0])
                    }
                }
            }
        }

        Rectangle {
            objectName: "gameOver"
            visible: win.controller.phase === GameController.Finished || win.controller.phase === GameController.Failed
            anchors.centerIn: board
            width: overText.implicitWidth + 60
            height: overText.implicitHeight + 40
            radius: 12
            color: "#ee0b0e14"
            border.color: "#82aaff"
            Text {
                id: overText
                anchors.centerIn: parent
                horizontalAlignment: Text.AlignHCenter
                color: "white"
                font.pixelSize: 24
                text: win.controller.phase === GameController.Failed
                      ? qsTr("The game stopped:\n%1").arg(win.controller.errorString)
                      : qsTr("Game over\nclose the window to leave")
            }
        }
    }
}
