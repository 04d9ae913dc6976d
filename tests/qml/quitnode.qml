// One node of tst_qmlquit: a World formed from the environment mmpirun
// sets. Once every rank is formed (a barrier), rank 1 quits the app; the
// others print how they saw rank 1 go and quit too. Nothing here calls
// close(): each World leaves by itself as its app quits. Exit status 0
// when rank 1 left cleanly, 3 when it was lost, 2 when formation failed,
// 4 when nothing was heard of it in time.
import QtQml
import MMPI

World {
    id: world
    autoStart: true

    property bool done: false

    function finish(status, message) {
        if (done)
            return
        done = true
        console.info(message)
        Qt.exit(status)
    }

    onFormed: barrier().then(result => {
        if (world.rank === 1)
            finish(0, "rank 1 quits (barrier " + (result.ok ? "passed" : "failed: " + result.error) + ")")
    })
    onNodeLeft: rank => {
        if (rank === 1)
            finish(0, "rank 1 left")
    }
    onNodeUnreachable: (rank, failureClass) => {
        if (rank === 1)
            finish(3, "rank 1 unreachable")
    }
    onNodeLost: (rank, failureClass, reason) => {
        if (rank === 1)
            finish(3, "rank 1 lost: " + reason)
    }
    onErrorOccurred: message => finish(2, "the world failed: " + message)

    property Timer deadline: Timer {
        interval: 30000
        running: true
        onTriggered: world.finish(4, "no word of rank 1 within 30 s")
    }
}
