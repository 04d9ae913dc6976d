// The scenes the tests draw with ParallelCanvas; PixelHelper::reference()
// draws the same with plain QPainter.
.pragma library

function basic(canvas) {
    let ok = canvas.clear("#203040")
    ok = canvas.setPen("#cc2211", 3) && ok
    ok = canvas.line(10, 10, 300, 200) && ok
    ok = canvas.setBrush("#8040c040") && ok
    ok = canvas.fillRect(20, 150, 100, 60) && ok
    ok = canvas.setPen("white", 2, 2 /* DashLine */) && ok
    ok = canvas.rect(200, 20, 100, 80) && ok
    ok = canvas.setPen("#ffee00", 4) && ok
    ok = canvas.setBrush("#1155dd") && ok
    ok = canvas.ellipse(150, 100, 120, 70) && ok
    ok = canvas.polygon([[40, 30], [110, 40], [60, 110]]) && ok
    ok = canvas.setPen("white", 1) && ok
    ok = canvas.polyline([Qt.point(10, 230), Qt.point(60, 180), [110, 230], [160, 180]]) && ok
    return ok
}

// A frame without a clear, to draw on top of basic().
function plus(canvas) {
    let ok = canvas.setPen("#00ff00", 5)
    ok = canvas.line(0, 239, 319, 0) && ok
    ok = canvas.ellipse(5, 5, 30, 30) && ok // with basic()'s brush
    return ok
}
