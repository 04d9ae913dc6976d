// The command line of mmpi-mandelbrot, and the world the shared modes run in:
// formed from mmpirun's environment, with the communicators SharedRender
// needs (or none when the program runs alone).
#pragma once

#include "sharedrender.h"

#include <QPointF>
#include <QString>

#include <memory>
#include <optional>

namespace mmpi::demo {

struct Options
{
    View view;
    int band = 8;
    QString out;
    bool tint = false;
    bool share = false;     // draw the bands on a canvas every node shows
    bool gui = false;
    QString canvasOut;      // every node saves its canvas; "{rank}" becomes the node's rank
    QString screenshot;     // GUI: grab the window (same "{rank}" rule)
    // GUI scripting, for tests and screenshots: on node scriptRank, once the
    // first picture is complete, turn the wheel `scriptWheelSteps` notches at
    // fractions scriptWheelAt of the picture.
    int scriptWheelSteps = 0;
    QPointF scriptWheelAt{0.5, 0.5};
    int scriptRank = 1;
    // GUI: after this many complete renders, save and quit on every node (0: never).
    int exitAfter = 0;
};

// "{rank}" in a per-node output name replaced by the node's rank.
QString perNodePath(const QString &pattern, int rank);

// The world of a shared run (nullopt when not under mmpirun: alone).
class SharedWorld
{
public:
    SharedWorld();
    ~SharedWorld(); // closes the world (goodbyes)
    // Forms the world from the environment and makes the communicators;
    // false with a message on stderr if that fails.
    bool form();
    std::optional<SharedRender::Network> network() const { return m_network; }
    int rank() const { return m_network ? m_network->control.rank() : 0; }

private:
    std::unique_ptr<World> m_world;
    std::optional<SharedRender::Network> m_network;
};

// The headless shared render (--share or --canvas-out) and the GUI (--gui).
int runShared(const Options &options);
int runGui(const Options &options);
// Writes the root's PNG and prints the summary (time, bands per node, and
// the bands in flight on average: summed band compute time over wall time);
// 1 if the PNG cannot be written.
int writeSummary(const Options &options, const QImage &image, double seconds, double workSeconds,
                 const QString &perNode, int nodes);

} // namespace mmpi::demo
