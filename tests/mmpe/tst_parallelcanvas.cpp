// ParallelCanvas with four in-process nodes over the local transport:
// broadcast mode gives every node the same pixels as a single-process
// reference scene built from the same commands (image blocks and a clear
// included), also when all nodes draw at once and flip together; drawOnRoot
// changes only the root's picture; a member created after frames were drawn
// catches up through the replay; on a tiled wall (a quarter viewport each)
// every device gets a smaller stream and its tile equals its region of the
// whole picture; malformed bytes from a rogue member are refused and leave
// every scene as it would be without them.
#include "coroutinetest.h"
#include "offscreenmain.h"
#include "commworld.h"
#include "protectedworld.h"
#include "canvassamples.h"
#include "patience.h"

#include <mmpi/mmpe/parallelcanvas.h>

#include <QPainter>
#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::Patience;
using namespace samples;

namespace {

const QSize Logical(320, 240);
const QSize Target(320, 240);

// The commands of frame k (drawn by rank k % 4). State is set only in some
// frames, so a sender's later frames rely on the state its earlier ones set
// while other senders' frames come in between.
QList<CanvasCommand> frameCommands(int k)
{
    QList<CanvasCommand> c;
    if (k % 3 == 0)
        c << CanvasCommand::setPen({qRgba(40 * k % 256, 200, 255 - 20 * k, 255), quint16(1 + k % 4),
                                    k % 2 ? CanvasPenStyle::Dash : CanvasPenStyle::Solid});
    if (k % 4 == 1)
        c << CanvasCommand::setBrush({CanvasBrushStyle::Solid, qRgba(200, 30 * k % 256, 60, 200)});
    if (k == 2)
        c << CanvasCommand::setFont(bigFont());
    c << CanvasCommand::line({10 * k, 5}, {300 - 7 * k, 230});
    c << CanvasCommand::ellipse(QRect(20 + 9 * k, 30 + 5 * k, 60, 40));
    c << CanvasCommand::polygon({{150, 10 + k}, {200 + k, 80}, {120, 90 - k}});
    c << CanvasCommand::filledRect(QRect(250 - 5 * k, 150, 30, 20));
    c << CanvasCommand::outlineRect(QRect(5 + k, 180, 50, 40));
    c << CanvasCommand::polyline({{0, 100 + k}, {40, 120}, {80, 100 - k}, {120, 130}});
    c << CanvasCommand::textAt({30, 200 + k}, QStringLiteral("frame %1").arg(k));
    if (k == 5)
        c << CanvasCommand::imageAt({100, 100}, gradientImage(64, 48, true));
    if (k == 6)
        c.prepend(CanvasCommand::clear(0xFF203040));
    if (k == 9)
        c << CanvasCommand::imageAt({180, 20}, noiseImage(40, 40, 7));
    return c;
}

// What a single process draws for frames sent in this order by these ranks:
// each frame runs with its sender's own pen, brush and font.
class Reference
{
public:
    void add(int sender, const QList<CanvasCommand> &commands)
    {
        CanvasState &s = m_state[sender];
        QVERIFY(m_encoder.append(CanvasCommand::setPen(s.pen)));
        QVERIFY(m_encoder.append(CanvasCommand::setBrush(s.brush)));
        QVERIFY(m_encoder.append(CanvasCommand::setFont(s.font)));
        for (const CanvasCommand &c : commands) {
            if (c.opcode == CanvasOpcode::SetPen)
                s.pen = c.pen;
            else if (c.opcode == CanvasOpcode::SetBrush)
                s.brush = c.brush;
            else if (c.opcode == CanvasOpcode::SetFont)
                s.font = c.font;
            QVERIFY(m_encoder.append(c));
        }
        QVERIFY(m_scene.appendBytes(m_encoder.endFrame()));
    }
    QImage image() const { return m_scene.toImage(Target); }
    const CanvasScene &scene() const { return m_scene; }

private:
    QHash<int, CanvasState> m_state;
    CanvasEncoder m_encoder;
    CanvasScene m_scene{Logical};
};

void draw(ParallelCanvas &canvas, const QList<CanvasCommand> &commands)
{
    for (const CanvasCommand &c : commands)
        QVERIFY2(canvas.append(c), "command refused");
    QVERIFY(canvas.endFrame());
}

bool reached(const std::vector<std::unique_ptr<ParallelCanvas>> &canvases, quint32 frame)
{
    for (const auto &c : canvases)
        if (c && c->scene().currentFrame().value_or(0) < frame)
            return false;
    return true;
}

QImage blank()
{
    return CanvasScene(Logical).toImage(Target);
}

// Many small shapes over the whole canvas: most of them fall into one
// quarter only, so a tile's stream is much smaller than the whole.
QList<CanvasCommand> gridCommands(int k)
{
    QList<CanvasCommand> c;
    c << CanvasCommand::setPen({qRgba(255, 40 * k % 256, 0, 255), quint16(k % 3), CanvasPenStyle::Solid});
    c << CanvasCommand::setBrush({CanvasBrushStyle::Solid, qRgba(20 * k % 256, 90, 200, 160)});
    for (int y = 0; y < 6; ++y) {
        for (int x = 0; x < 8; ++x) {
            const QPoint at(7 + 40 * x + k, 6 + 40 * y + k);
            if ((x + y + k) % 3 == 0)
                c << CanvasCommand::ellipse(QRect(at, QSize(18, 14)));
            else if ((x + y + k) % 3 == 1)
                c << CanvasCommand::line(at, at + QPoint(25, 20));
            else
                c << CanvasCommand::filledRect(QRect(at, QSize(15, 15)));
        }
    }
    // Across the middle: in every tile.
    c << CanvasCommand::line({0, 119 + k}, {319, 121 - k});
    c << CanvasCommand::textAt({150, 125}, QStringLiteral("tile %1").arg(k));
    return c;
}

const QList<QRect> Quarters{QRect(0, 0, 160, 120), QRect(160, 0, 160, 120), QRect(0, 120, 160, 120),
                            QRect(160, 120, 160, 120)};

// Every frame the root numbered, as it applied them (its scene lets go of
// what a clear wiped).
class RootStream
{
public:
    explicit RootStream(const ParallelCanvas &root)
    {
        QObject::connect(&root, &ParallelCanvas::frameReady, &m_context,
                         [this, &root] { m_batches.append(root.scene().batches().constLast()); });
    }
    const QList<CanvasBatch> &batches() const { return m_batches; }

private:
    QObject m_context;
    QList<CanvasBatch> m_batches;
};

// The bytes and commands of the whole numbered stream, as a member without a
// viewport receives it: one encoder turns the root's frames back into the
// same bytes.
std::pair<quint64, quint64> wholeStream(const RootStream &stream)
{
    CanvasEncoder encoder;
    quint64 bytes = 0, commands = 0;
    for (const CanvasBatch &b : stream.batches()) {
        auto encoded = encoder.encode(b);
        if (!encoded)
            return {0, 0};
        bytes += quint64(encoded->size());
        commands += quint64(b.commands.size());
    }
    return {bytes, commands};
}

QImage composed(const std::vector<std::unique_ptr<ParallelCanvas>> &canvases)
{
    QImage wall(Logical, QImage::Format_ARGB32_Premultiplied);
    wall.fill(Qt::transparent);
    QPainter p(&wall);
    p.setCompositionMode(QPainter::CompositionMode_Source);
    for (const auto &c : canvases)
        p.drawImage(c->viewport().topLeft(), c->viewportImage());
    return wall;
}

} // namespace

class TestParallelCanvas : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void broadcastGivesEveryNodeTheSamePixels()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases;
        std::vector<std::unique_ptr<QSignalSpy>> replays;
        for (int r = 0; r < 4; ++r) {
            canvases.push_back(std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::Broadcast, 0, Logical));
            replays.push_back(std::make_unique<QSignalSpy>(canvases.back().get(), &ParallelCanvas::replayed));
        }
        // The (empty) replay each member asked for: so the byte counts below
        // hold only the frames, not frame 1 twice.
        QVERIFY(QTest::qWaitFor([&] { return replays[1]->size() + replays[2]->size() + replays[3]->size() == 3; },
                                Patience));
        QSignalSpy ready(canvases[2].get(), &ParallelCanvas::frameReady);
        const RootStream stream(*canvases[0]);
        Reference reference;
        constexpr int Frames = 12;
        for (int k = 0; k < Frames; ++k) {
            const int sender = k % 4;
            draw(*canvases[sender], frameCommands(k));
            reference.add(sender, frameCommands(k));
            QVERIFY2(QTest::qWaitFor([&] { return reached(canvases, quint32(k + 1)); }, Patience),
                     qPrintable(QStringLiteral("frame %1 not applied everywhere").arg(k + 1)));
        }
        QCOMPARE(ready.size(), Frames);
        QCOMPARE(ready.last().at(0).toUInt(), quint32(Frames));
        const QImage expected = reference.image();
        QVERIFY(expected != blank());
        // Every scene holds the frames from the clear (frame 7) on: the replay.
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(canvases[r]->scene().frameCount(), Frames - 6);
            QCOMPARE(canvases[r]->image(Target), expected);
        }
        QCOMPARE(canvases[0]->scene().replay().size(), Frames - 6);
        QCOMPARE(canvases[0]->framesSkipped(), 0u); // fast links: nothing skipped
        // Without viewports every member received the whole stream (the
        // counters measure what the tiled-wall test compares against).
        QCOMPARE(stream.batches().size(), Frames);
        const auto [bytes, commands] = wholeStream(stream);
        QVERIFY(bytes > 0);
        QCOMPARE(canvases[0]->bytesReceived(), quint64(0));
        for (int r = 1; r < 4; ++r) {
            QCOMPARE(canvases[r]->bytesReceived(), bytes);
            QCOMPARE(canvases[r]->commandsReceived(), commands);
        }

        // All at once: the order is the root's, the same on every node.
        const QImage before = canvases[0]->image(Target);
        for (int r = 0; r < 4; ++r)
            draw(*canvases[r], frameCommands(20 + r));
        std::vector<QCoro::Task<ParallelCanvas::Flip>> flips;
        for (int r = 0; r < 4; ++r)
            flips.push_back(canvases[r]->flipTogether());
        for (int r = 0; r < 4; ++r) {
            const auto flipped = mmpi::test::finish(flips[size_t(r)]);
            QVERIFY2(!flipped.error.isError(), qPrintable(flipped.error.toString()));
            QCOMPARE(flipped.frame, quint32(Frames + 4));
            // flipTogether() returned: the frame is here already.
            QCOMPARE(canvases[r]->scene().currentFrame(), std::optional<quint32>(Frames + 4));
        }
        CanvasScene rebuilt(Logical);
        for (const CanvasBatch &b : canvases[0]->scene().batches())
            QVERIFY(rebuilt.appendBatch(b));
        const QImage after = rebuilt.toImage(Target);
        QVERIFY(after != before);
        for (int r = 0; r < 4; ++r)
            QCOMPARE(canvases[r]->image(Target), after);
    }

    void tiledWallSendsEachDeviceItsTile()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases;
        for (int r = 0; r < 4; ++r) {
            canvases.push_back(std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::Broadcast, 0, Logical));
            QVERIFY(canvases.back()->setViewport(Quarters[r]));
            QCOMPARE(canvases.back()->viewport(), Quarters[r]);
        }
        QVERIFY(QTest::qWaitFor([&] {
            for (int r = 1; r < 4; ++r)
                if (canvases[0]->memberViewport(r) != Quarters[r])
                    return false;
            return true;
        }, Patience));
        const RootStream stream(*canvases[0]);
        Reference reference;
        constexpr int Frames = 20;
        for (int k = 0; k < Frames; ++k) {
            const int sender = k % 4;
            const auto commands = k < 12 ? frameCommands(k) : gridCommands(k);
            draw(*canvases[sender], commands);
            reference.add(sender, commands);
            QVERIFY2(QTest::qWaitFor([&] { return reached(canvases, quint32(k + 1)); }, Patience),
                     qPrintable(QStringLiteral("frame %1 not applied everywhere").arg(k + 1)));
        }
        const QImage whole = reference.image();
        QVERIFY(whole != blank());
        QCOMPARE(canvases[0]->image(Target), whole);
        // Each tile is its region of the whole picture, pixel for pixel.
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(canvases[r]->scene().frameCount(), Frames - 6); // from the clear on
            QCOMPARE(canvases[r]->scene().state(), canvases[0]->scene().state());
            QCOMPARE(canvases[r]->viewportImage(), whole.copy(Quarters[r]));
        }
        QCOMPARE(composed(canvases), whole);
        // ... from a smaller stream: the members lack what is not theirs.
        const auto [bytes, commands] = wholeStream(stream);
        for (int r = 1; r < 4; ++r) {
            qInfo("rank %d received %llu of %llu bytes, %llu of %llu commands", r,
                  qulonglong(canvases[r]->bytesReceived()), qulonglong(bytes),
                  qulonglong(canvases[r]->commandsReceived()), qulonglong(commands));
            QVERIFY(canvases[r]->bytesReceived() > 0);
            // Image blocks are most of the bytes; rank 1's quarter has the
            // noise block of frame 9 and the gradient of frame 5 crosses all.
            QVERIFY(canvases[r]->bytesReceived() < bytes * 9 / 10);
            QVERIFY(canvases[r]->commandsReceived() < commands / 2);
            QVERIFY(canvases[r]->image(Target) != whole);
        }

        // Viewports change: rank 3 takes the whole canvas, rank 2 moves to
        // the top right; each gets the replay for its new area at once.
        QSignalSpy replayed2(canvases[2].get(), &ParallelCanvas::replayed);
        QSignalSpy replayed3(canvases[3].get(), &ParallelCanvas::replayed);
        QVERIFY(canvases[3]->setViewport(QRect()));
        QVERIFY(canvases[2]->setViewport(Quarters[1]));
        QVERIFY(QTest::qWaitFor([&] { return replayed2.size() == 1 && replayed3.size() == 1; }, Patience));
        QCOMPARE(canvases[3]->viewportImage(), whole);
        QCOMPARE(canvases[3]->image(Target), whole);
        QCOMPARE(canvases[2]->viewportImage(), whole.copy(Quarters[1]));
        // Later frames follow the new viewports.
        draw(*canvases[1], gridCommands(Frames));
        reference.add(1, gridCommands(Frames));
        QVERIFY(QTest::qWaitFor([&] { return reached(canvases, Frames + 1); }, Patience));
        QCOMPARE(canvases[3]->image(Target), reference.image());
        QCOMPARE(canvases[2]->viewportImage(), reference.image().copy(Quarters[1]));
        QCOMPARE(canvases[1]->viewportImage(), reference.image().copy(Quarters[1]));
        // A viewport that does not fit the wire's 16 bits is refused here.
        QVERIFY(!canvases[1]->setViewport(QRect(0, 0, 70000, 10)));
        QVERIFY(!canvases[1]->setViewport(QRect(40000, 0, 10, 10)));
        QCOMPARE(canvases[1]->viewport(), Quarters[1]);
    }

    void drawOnRootChangesOnlyTheRoot()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases;
        for (int r = 0; r < 4; ++r)
            canvases.push_back(std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::DrawOnRoot, 0, Logical));
        Reference reference;
        for (int k = 0; k < 6; ++k) {
            const int sender = 1 + k % 3;
            draw(*canvases[sender], frameCommands(k + 3));
            reference.add(sender, frameCommands(k + 3));
            QVERIFY(QTest::qWaitFor([&] { return canvases[0]->scene().currentFrame() == quint32(k + 1); }, Patience));
        }
        std::vector<QCoro::Task<ParallelCanvas::Flip>> flips;
        for (int r = 0; r < 4; ++r)
            flips.push_back(canvases[r]->flipTogether());
        for (auto &f : flips) {
            const auto flipped = mmpi::test::finish(f);
            QVERIFY2(!flipped.error.isError(), qPrintable(flipped.error.toString()));
            QCOMPARE(flipped.frame, quint32(6));
        }
        QTest::qWait(100);
        QVERIFY(reference.image() != blank());
        QCOMPARE(canvases[0]->image(Target), reference.image());
        for (int r = 1; r < 4; ++r) {
            QCOMPARE(canvases[r]->scene().frameCount(), 0);
            QCOMPARE(canvases[r]->image(Target), blank());
        }
    }

    void lateMemberCatchesUp()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases(4);
        for (int r = 0; r < 3; ++r)
            canvases[size_t(r)] = std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::Broadcast, 0, Logical);
        Reference reference;
        for (int k = 0; k < 9; ++k) {
            const int sender = k % 3;
            draw(*canvases[size_t(sender)], frameCommands(k));
            reference.add(sender, frameCommands(k));
            QVERIFY(QTest::qWaitFor([&] { return reached(canvases, quint32(k + 1)); }, Patience));
        }
        // Every scene let go of what the clear in frame 7 wiped.
        for (int r = 0; r < 3; ++r)
            QCOMPARE(canvases[size_t(r)]->scene().frameCount(), 3);
        canvases[3] = std::make_unique<ParallelCanvas>(w[3], ParallelCanvas::Mode::Broadcast, 0, Logical);
        QSignalSpy replayed(canvases[3].get(), &ParallelCanvas::replayed);
        QVERIFY(replayed.wait(Patience) || replayed.size() == 1);
        QCOMPARE(replayed.first().at(0).toUInt(), 9u);
        // The replay replaced what had queued up: only the frames since the clear (6).
        QCOMPARE(canvases[3]->scene().frameCount(), 3);
        QCOMPARE(canvases[3]->image(Target), reference.image());
        QCOMPARE(canvases[3]->image(Target), canvases[0]->image(Target));

        // It draws too, and asks again: still the same picture as everyone.
        draw(*canvases[3], frameCommands(10));
        reference.add(3, frameCommands(10));
        QVERIFY(QTest::qWaitFor([&] { return reached(canvases, 10); }, Patience));
        canvases[1]->requestReplay();
        QSignalSpy replayed1(canvases[1].get(), &ParallelCanvas::replayed);
        QVERIFY(replayed1.wait(Patience) || replayed1.size() == 1);
        QCOMPARE(canvases[1]->scene().frameCount(), 4);
        for (int r = 0; r < 4; ++r)
            QCOMPARE(canvases[size_t(r)]->image(Target), reference.image());
    }

    void slowMembersSkipToTheLatestPicture()
    {
        // Given 3 devices on one Bluetooth-like radio each (90 kB/s) and a
        // root that draws frames of 6.4 KB (a noise block: incompressible)
        // much faster than its radio can send them to two members
        CommWorld w(QStringLiteral("local"), 3, [](WorldConfig &config) {
            config.transport = QStringLiteral("sim");
            config.rootAddress.replace(QStringLiteral("local://"), QStringLiteral("sim://"));
            config.transportOptions.insert(QStringLiteral("link"), QStringLiteral("bluetooth"));
        });
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases;
        for (int r = 0; r < 3; ++r)
            canvases.push_back(std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::Broadcast, 0, Logical));
        ParallelCanvas &root = *canvases[0];
        root.setMaxRelayBacklog(8 * 1024);
        QSignalSpy lagging(&root, &ParallelCanvas::memberLaggingChanged);
        constexpr int Frames = 30;
        for (int k = 0; k < Frames; ++k) {
            QVERIFY(root.clear(0xFF102030));
            QVERIFY(root.drawImage({20 + 5 * k, 40}, noiseImage(40, 40, quint32(k))));
            QVERIFY(root.drawText({10, 200}, QStringLiteral("frame %1").arg(k)));
            QVERIFY(root.endFrame());
        }
        // Then every member ends with the root's last picture, long before
        // all 30 frames (390 KB for the two) could have gone through the radio
        QCOMPARE(root.scene().currentFrame(), std::optional<quint32>(Frames));
        QVERIFY(QTest::qWaitFor([&] { return reached(canvases, Frames); }, Patience));
        for (int r = 1; r < 3; ++r)
            QCOMPARE(canvases[r]->image(Target), root.image(Target));
        // because the root skipped frames for them and sent each a replay
        QVERIFY(root.framesSkipped() > 0);
        for (int r = 1; r < 3; ++r) {
            QVERIFY2(canvases[r]->bytesReceived() < quint64(Frames / 2 * 6400),
                     qPrintable(QStringLiteral("rank %1 received %2 bytes").arg(r).arg(canvases[r]->bytesReceived())));
            QVERIFY(QTest::qWaitFor([&] { return root.relayBacklog(r) == 0; }, Patience));
        }
        // Each fell behind and caught up again, and frames flow as before.
        QVERIFY(QTest::qWaitFor([&] { return lagging.size() >= 4; }, Patience));
        QHash<int, bool> last;
        for (const auto &change : std::as_const(lagging))
            last.insert(change.at(0).toInt(), change.at(1).toBool());
        QCOMPARE(last, (QHash<int, bool>{{1, false}, {2, false}}));
        const quint64 skipped = root.framesSkipped();
        QVERIFY(root.drawLine({0, 0}, {100, 100}));
        QVERIFY(root.endFrame());
        QVERIFY(QTest::qWaitFor([&] { return reached(canvases, Frames + 1); }, Patience));
        QCOMPARE(root.framesSkipped(), skipped);
        for (int r = 1; r < 3; ++r)
            QCOMPARE(canvases[r]->image(Target), root.image(Target));
    }

    void newRootCarriesOnWhenTheRootIsLost()
    {
        // Given 4 devices drawing together, protected by SHRINK
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = test::protectAll(w, Policy::Shrink, Patience);
        QVERIFY(!all.empty());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases;
        for (int r = 0; r < 4; ++r)
            canvases.push_back(std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::Broadcast, 0, Logical));
        Reference reference;
        for (int k = 0; k < 8; ++k) {
            draw(*canvases[size_t(k % 4)], frameCommands(k));
            reference.add(k % 4, frameCommands(k));
            QVERIFY(QTest::qWaitFor([&] { return reached(canvases, quint32(k + 1)); }, Patience));
        }

        // When the root's device dies
        canvases[0].reset();
        w.kill(0);
        std::vector<std::unique_ptr<ParallelCanvas>> next;
        for (int r = 1; r < 4; ++r) {
            QTRY_COMPARE_WITH_TIMEOUT(all[size_t(r)].reconfigured->size(), 1, Patience);
            // and each survivor carries its picture on over the shrunk communicator
            const Communicator shrunk = all[size_t(r)].ft->communicator();
            QCOMPARE(shrunk.size(), 3);
            next.push_back(std::make_unique<ParallelCanvas>(shrunk, ParallelCanvas::Mode::Broadcast, 0,
                                                            canvases[size_t(r)]->scene()));
            canvases[size_t(r)].reset();
        }
        // Then the new root (old rank 1) goes on numbering after frame 8,
        QCOMPARE(next[0]->scene().currentFrame(), std::optional<quint32>(8));
        QVERIFY(next[0]->isRoot());
        // and frames drawn on every survivor reach all of them
        for (int k = 0; k < 3; ++k) {
            draw(*next[size_t(k)], frameCommands(9 + k));
            reference.add(10 + k, frameCommands(9 + k)); // new canvases: fresh pens
            QVERIFY2(QTest::qWaitFor([&] { return reached(next, quint32(9 + k)); }, Patience),
                     qPrintable(QStringLiteral("frame %1 not applied everywhere").arg(9 + k)));
        }
        for (const auto &c : next)
            QCOMPARE(c->image(Target), reference.image());
    }

    void rogueBytesAreRefused()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<ParallelCanvas>> canvases;
        for (int r = 0; r < 4; ++r)
            canvases.push_back(std::make_unique<ParallelCanvas>(w[r], ParallelCanvas::Mode::Broadcast, 0, Logical));
        QSignalSpy refusedAtRoot(canvases[0].get(), &ParallelCanvas::messageRefused);
        QSignalSpy refusedAt1(canvases[1].get(), &ParallelCanvas::messageRefused);
        Reference reference;
        draw(*canvases[1], frameCommands(0));
        reference.add(1, frameCommands(0));
        QVERIFY(QTest::qWaitFor([&] { return reached(canvases, 1); }, Patience));

        // Rank 2 goes rogue on the canvas's communicator.
        CanvasEncoder encoder;
        QVERIFY(encoder.append(CanvasCommand::filledRect(QRect(0, 0, 320, 240))));
        const QByteArray valid = encoder.endFrame();
        const QList<QByteArray> junk{QByteArray("not a frame at all"), valid.left(valid.size() - 1),
                                     valid + QByteArray(1, '\0'), QByteArray()};
        for (const QByteArray &bytes : junk)
            QVERIFY(w[2].send(0, ParallelCanvas::SubmitTag, bytes).wait());
        // Not a QByteArray at all.
        QVERIFY(w[2].send(0, ParallelCanvas::SubmitTag, QList<int>{1, 2, 3}).wait());
        // Frames may only come from the root; nor may a member be sent a replay.
        QVERIFY(w[2].send(1, ParallelCanvas::FrameTag, valid).wait());
        QVERIFY(w[2].send(1, ParallelCanvas::ReplayTag, valid).wait());
        QVERIFY(w[2].send(1, 99, valid).wait());
        // Viewports of a bad size or with no pixels.
        QVERIFY(w[2].send(0, ParallelCanvas::ViewportTag, QByteArray(5, 'x')).wait());
        QVERIFY(w[2].send(0, ParallelCanvas::ViewportTag, QByteArray::fromHex("0000000000000010")).wait());
        QVERIFY(QTest::qWaitFor([&] { return refusedAtRoot.size() == junk.size() + 3; }, Patience));
        QCOMPARE(canvases[0]->memberViewport(2), QRect());
        QVERIFY(QTest::qWaitFor([&] { return refusedAt1.size() == 3; }, Patience));
        QCOMPARE(refusedAtRoot.first().at(0).toInt(), 2);

        draw(*canvases[3], frameCommands(1));
        reference.add(3, frameCommands(1));
        QVERIFY(QTest::qWaitFor([&] { return reached(canvases, 2); }, Patience));
        QTest::qWait(100);
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(canvases[r]->scene().frameCount(), 2);
            QCOMPARE(canvases[r]->image(Target), reference.image());
        }
        QVERIFY(reference.image() != blank());
    }
};

MMPI_OFFSCREEN_TEST_MAIN(TestParallelCanvas)

#include "tst_parallelcanvas.moc"
