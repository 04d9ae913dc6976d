#include "sharedrender.h"

#include <mmpi/mmpe/canvasencoder.h>

#include <QDataStream>
#include <QLoggingCategory>
#include <QTimer>
#include <QtEndian>

Q_LOGGING_CATEGORY(lcMandelbrot, "mmpi.demo.mandelbrot")

namespace mmpi::demo {

namespace {

// Image blocks narrower than MMPE's 8192-pixel limit, however wide the picture.
constexpr int BlockWidth = 4096;
constexpr int AckTimeoutMs = 30000;

QByteArray pack(const auto &...values)
{
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    (out << ... << values);
    return bytes;
}

// Reads exactly the given fields; false if the bytes are short or too long.
bool unpack(const QByteArray &bytes, auto &...values)
{
    QDataStream in(bytes);
    (in >> ... >> values);
    return in.status() == QDataStream::Ok && in.atEnd();
}

} // namespace

// The shared picture: a broadcast ParallelCanvas in a world, a local scene
// fed by an encoder alone. Both number frames and keep a CanvasScene.
struct SharedRender::Picture
{
    std::unique_ptr<ParallelCanvas> canvas;
    CanvasEncoder encoder;
    CanvasScene local;

    const CanvasScene &scene() const { return canvas ? canvas->scene() : local; }
    Result<void> append(const CanvasCommand &command)
    {
        return canvas ? canvas->append(command) : encoder.append(command);
    }
    Result<void> endFrame()
    {
        if (canvas)
            return canvas->endFrame();
        return local.appendBytes(encoder.endFrame());
    }
};

SharedRender::SharedRender(const View &view, int bandRows, bool tint, std::optional<Network> network,
                           QObject *parent)
    : QObject(parent), m_view(view), m_home(view), m_bandRows(bandRows), m_tint(tint), m_network(std::move(network)),
      m_canvas(std::make_unique<Picture>())
{
    const QSize size(view.width, view.height);
    m_total = bandCount(m_view, m_bandRows);
    if (m_network) {
        m_canvas->canvas = std::make_unique<ParallelCanvas>(m_network->canvas, ParallelCanvas::Mode::Broadcast, 0, size);
        connect(m_canvas->canvas.get(), &ParallelCanvas::frameReady, this, [this] {
            Q_EMIT pictureChanged();
            checkComplete();
            checkFinish();
        });
        connect(m_canvas->canvas.get(), &ParallelCanvas::replayed, this, [this] {
            Q_EMIT pictureChanged();
            checkComplete();
            checkFinish();
        });
        if (m_network->world) {
            connect(m_network->world, &World::nodeLost, this, [this](int worldRank) { memberGone(worldRank); });
            connect(m_network->world, &World::nodeLeft, this, [this](int worldRank) { memberGone(worldRank); });
        }
        m_inbox = std::make_unique<MessageListener>(m_network->control, this, QStringLiteral("mandelbrot control"),
                                                    [this](const Status &status, const Request &request) {
            if (const auto bytes = request.value<QByteArray>(); bytes)
                handle(status.source, status.tag, *bytes);
            else
                qCWarning(lcMandelbrot) << "ignoring a message that is not bytes from rank" << status.source;
        });
    } else {
        m_canvas->local = CanvasScene(size);
    }
    if (isRoot()) {
        m_picture = QImage(size, QImage::Format_RGB32);
        m_picture.fill(Qt::black);
        if (!m_network || nodes() == 1) {
            m_worker = std::make_unique<BandWorker>(std::nullopt);
            connect(m_worker.get(), &BandWorker::bandComputed, this,
                    [this](quint32 generation, int band, const QByteArray &result) {
                acceptBand(generation, band, 0, result);
            });
        }
    } else {
        m_worker = std::make_unique<BandWorker>(m_network->pool, 0);
        connect(m_worker.get(), &BandWorker::jobDone, this, [this](quint32 generation, int, const QString &error) {
            if (!error.isEmpty())
                qCWarning(lcMandelbrot) << "work pool" << generation << "ended:" << error;
            send(WorkerDoneTag, pack(generation));
        });
    }
    if (m_worker)
        m_worker->start();
}

SharedRender::~SharedRender()
{
    if (m_worker) {
        m_worker->stop();
        // A pool job ends when the world closes (its receive fails); bounded
        // so a quitting app never hangs on it.
        if (!m_worker->wait(5000))
            qCWarning(lcMandelbrot) << "the band worker did not stop within 5 s";
    }
}

int SharedRender::rank() const { return m_network ? m_network->control.rank() : 0; }

int SharedRender::nodes() const { return m_network ? m_network->control.size() : 1; }

QString SharedRender::viewText() const
{
    return QStringLiteral("centre %1%2%3i, width %4")
        .arg(m_view.centerX, 0, 'g', 8)
        .arg(m_view.centerY < 0 ? QStringLiteral(" - ") : QStringLiteral(" + "))
        .arg(std::abs(m_view.centerY), 0, 'g', 8)
        .arg(m_view.spanX, 0, 'g', 4);
}

const CanvasScene &SharedRender::scene() const { return m_canvas->scene(); }

quint32 SharedRender::frame() const { return scene().currentFrame().value_or(0); }

QImage SharedRender::canvasImage() const { return scene().toImage(pictureSize()); }

void SharedRender::start()
{
    if (isRoot())
        render(m_view);
}

void SharedRender::requestView(const View &wanted)
{
    View view = m_view;
    view.centerX = wanted.centerX;
    view.centerY = wanted.centerY;
    view.spanX = wanted.spanX;
    if (auto valid = validateView(view); !valid) {
        qCWarning(lcMandelbrot) << "view refused:" << valid.error().message;
        return;
    }
    if (isRoot())
        render(view);
    else
        send(ViewTag, encodeView(view));
}

void SharedRender::setTint(bool on)
{
    if (!isRoot()) {
        send(TintTag, pack(quint8(on)));
        return;
    }
    if (on == m_tint)
        return;
    m_tint = on;
    Q_EMIT tintChanged();
    // Redrawn from the bands kept: no need to compute anything again.
    (void)m_canvas->append(CanvasCommand::clear(qRgb(0, 0, 0)));
    (void)m_canvas->endFrame();
    for (int band = 0; band < m_bands.size(); ++band)
        if (!m_bands.at(band).isEmpty())
            drawBand(band);
    sendStatus();
}

void SharedRender::zoomAt(double fx, double fy, double factor)
{
    if (!(factor > 0) || !std::isfinite(fx) || !std::isfinite(fy))
        return;
    const double spanY = m_view.spanX * m_view.height / m_view.width;
    const double px = m_view.centerX + (fx - 0.5) * m_view.spanX;
    const double py = m_view.centerY - (fy - 0.5) * spanY;
    View next = m_view;
    next.spanX = m_view.spanX / factor;
    next.centerX = px - (fx - 0.5) * next.spanX;
    next.centerY = py + (fy - 0.5) * spanY / factor;
    requestView(next);
}

void SharedRender::pan(double dx, double dy)
{
    View next = m_view;
    next.centerX -= dx * m_view.spanX;
    next.centerY += dy * m_view.spanX * m_view.height / m_view.width;
    requestView(next);
}

// ---------------------------------------------------------------- messages

void SharedRender::handle(int source, int tag, const QByteArray &bytes)
{
    if (isRoot())
        handleAsRoot(source, tag, bytes);
    else if (source == 0)
        handleAsMember(tag, bytes);
    else
        qCWarning(lcMandelbrot) << "ignoring tag" << tag << "from rank" << source << ": only the root sends to members";
}

void SharedRender::handleAsRoot(int source, int tag, const QByteArray &bytes)
{
    if (m_gone.contains(source))
        return;
    quint32 generation = 0;
    quint8 on = 0;
    if (tag == ViewTag) {
        if (auto view = decodeView(bytes); view)
            requestView(*view);
        else
            qCWarning(lcMandelbrot) << "view from rank" << source << "refused:" << view.error().message;
    } else if (tag == TintTag && unpack(bytes, on)) {
        setTint(on != 0);
    } else if (tag == WorkerDoneTag && unpack(bytes, generation)) {
        if (generation == m_poolGeneration) {
            m_poolWaiting.remove(source);
            maybeNextPool();
        }
    } else if (tag == AckTag && bytes.isEmpty()) {
        if (m_acksWaiting) {
            m_acksWaiting->remove(source);
            checkAcks();
        }
    } else {
        qCWarning(lcMandelbrot) << "ignoring a malformed message (tag" << tag << ") from rank" << source;
    }
}

void SharedRender::handleAsMember(int tag, const QByteArray &bytes)
{
    quint32 generation = 0, frame = 0;
    qint32 rows = 0, tagBase = 0, done = 0, total = 0;
    quint8 tint = 0;
    QByteArray viewBytes;
    if (tag == StartTag && unpack(bytes, generation, rows, tagBase, viewBytes)) {
        const auto view = decodeView(viewBytes);
        if (!view || rows < 1) {
            qCWarning(lcMandelbrot) << "refusing a pool with a bad view or band size";
            return;
        }
        m_worker->enqueue({generation, *view, rows, tagBase});
    } else if (tag == CancelTag && unpack(bytes, generation)) {
        m_worker->cancelUpTo(generation);
    } else if (tag == StatusTag && unpack(bytes, generation, done, total, tint, frame, viewBytes)) {
        const auto view = decodeView(viewBytes);
        if (!view || done < 0 || total < done) {
            qCWarning(lcMandelbrot) << "refusing a malformed status from the root";
            return;
        }
        const bool newView = !(*view == m_view);
        m_generation = generation;
        m_view = *view;
        m_done = done;
        m_total = total;
        m_statusFrame = frame;
        if (m_tint != (tint != 0)) {
            m_tint = tint != 0;
            Q_EMIT tintChanged();
        }
        if (newView)
            Q_EMIT viewChanged();
        Q_EMIT progressChanged();
        checkComplete();
    } else if (tag == FinishTag && unpack(bytes, frame)) {
        m_finishFrame = frame;
        checkFinish();
    } else {
        qCWarning(lcMandelbrot) << "ignoring a malformed message (tag" << tag << ") from the root";
    }
}

void SharedRender::sendToMembers(int tag, const QByteArray &bytes)
{
    for (int member : liveMembers())
        m_network->control.isend(member, tag, bytes);
}

void SharedRender::send(int tag, const QByteArray &bytes)
{
    if (m_network)
        m_network->control.isend(0, tag, bytes);
}

QList<int> SharedRender::liveMembers() const
{
    QList<int> members;
    for (int r = 1; r < nodes(); ++r)
        if (!m_gone.contains(r))
            members << r;
    return members;
}

void SharedRender::memberGone(int worldRank)
{
    const int member = m_network->control.rankOfWorldRank(worldRank);
    if (member == NoRank || m_gone.contains(member))
        return;
    m_gone.insert(member);
    if (!isRoot())
        return;
    m_poolWaiting.remove(member);
    if (m_acksWaiting) {
        m_acksWaiting->remove(member);
        checkAcks();
    }
    maybeNextPool();
}

// ---------------------------------------------------------------- root

void SharedRender::render(const View &view)
{
    ++m_generation;
    m_latestGeneration->store(m_generation);
    m_view = view;
    m_total = bandCount(m_view, m_bandRows);
    m_done = 0;
    m_bands = QList<QByteArray>(m_total);
    m_bandNode = QList<int>(m_total, 0);
    m_byNode.clear();
    m_workSeconds = 0;
    m_wallSeconds = 0;
    m_clock.start();
    m_picture.fill(Qt::black);
    (void)m_canvas->append(CanvasCommand::clear(qRgb(0, 0, 0)));
    (void)m_canvas->endFrame();
    Q_EMIT viewChanged();
    Q_EMIT progressChanged();
    sendStatus();
    if (m_worker) { // alone: this node computes
        m_worker->cancelUpTo(m_generation - 1);
        m_worker->enqueue({m_generation, m_view, m_bandRows, 0});
    } else if (m_pool) { // the running pool ends quickly; the next starts then
        sendToMembers(CancelTag, pack(m_generation - 1));
    } else {
        startPool();
    }
}

// One pool per view, on tags of its own, so a stray message of an old pool
// can never be taken for one of the new.
void SharedRender::startPool()
{
    m_poolGeneration = m_generation;
    m_poolFinished = false;
    const auto members = liveMembers();
    m_poolWaiting = QSet<int>(members.begin(), members.end());
    const qint32 tagBase = WorkPool::DefaultTagBase + 4 * qint32(m_generation % 4096);
    m_pool = new WorkPool(m_network->world, m_network->pool, 0, this);
    m_pool->setTagBase(tagBase);
    const quint32 generation = m_generation;
    // The root computes bands too, on a pool thread; a band of a view that
    // was replaced meanwhile is answered empty, as the members do.
    m_pool->setLocalCompute([latest = m_latestGeneration, generation, view = m_view,
                             rows = m_bandRows](qint64 band, const QByteArray &) {
        return latest->load() == generation ? timedBand(view, rows, int(band)) : QByteArray();
    });
    connect(m_pool, &WorkPool::resultReady, this, [this, generation](qint64 band, int worker, const QByteArray &result) {
        acceptBand(generation, int(band), worker, result);
    });
    connect(m_pool, &WorkPool::workerLost, this, &SharedRender::workerLost);
    connect(m_pool, &WorkPool::finished, this, [this] {
        m_poolFinished = true;
        maybeNextPool();
    });
    connect(m_pool, &WorkPool::failed, this, [this](const Error &reason) { Q_EMIT failed(reason.message); });
    sendToMembers(StartTag, pack(m_generation, qint32(m_bandRows), tagBase, encodeView(m_view)));
    QList<QByteArray> items;
    for (int band = 0; band < m_total; ++band)
        items << QByteArray();
    m_pool->manage(items);
}

// A pool is over once it has every result and every member has left it (a
// member that asks late still gets its "done" from this pool's listener).
void SharedRender::maybeNextPool()
{
    if (!m_pool || !m_poolFinished || !m_poolWaiting.isEmpty())
        return;
    m_pool->deleteLater();
    m_pool = nullptr;
    if (m_poolGeneration != m_generation)
        startPool();
}

void SharedRender::acceptBand(quint32 generation, int band, int node, const QByteArray &result)
{
    if (generation != m_generation || result.isEmpty() || band < 0 || band >= m_total || !m_bands.at(band).isEmpty())
        return;
    const qsizetype pixels = qsizetype(m_view.width) * rowsOf(m_view, m_bandRows, band) * 4;
    if (result.size() != 8 + pixels) {
        qCWarning(lcMandelbrot) << "band" << band << "from rank" << node << "has" << result.size() << "bytes, not"
                                << 8 + pixels;
        return;
    }
    m_workSeconds += double(qFromBigEndian<qint64>(result.constData())) / 1e9;
    m_bands[band] = result.sliced(8);
    m_bandNode[band] = node;
    ++m_byNode[node];
    ++m_done;
    drawBand(band);
    if (m_done == m_total)
        m_wallSeconds = double(m_clock.nsecsElapsed()) / 1e9;
    sendStatus();
    Q_EMIT progressChanged();
    Q_EMIT pictureChanged();
    if (m_done == m_total)
        Q_EMIT renderComplete(m_generation);
}

void SharedRender::drawBand(int band)
{
    const int firstRow = band * m_bandRows;
    const QRgb tint = m_tint ? tintOf(m_bandNode.at(band)) : 0;
    placeBand(m_picture, firstRow, m_bands.at(band), tint);
    const int rows = rowsOf(m_view, m_bandRows, band);
    for (int x = 0; x < m_view.width; x += BlockWidth) {
        const QImage block = m_picture.copy(x, firstRow, std::min(BlockWidth, m_view.width - x), rows);
        if (auto drawn = m_canvas->append(CanvasCommand::imageAt(QPoint(x, firstRow), block)); !drawn)
            qCWarning(lcMandelbrot) << "band" << band << "not drawn:" << drawn.error().message;
    }
    if (auto ended = m_canvas->endFrame(); !ended)
        qCWarning(lcMandelbrot) << "frame not sent:" << ended.error().message;
}

void SharedRender::sendStatus()
{
    if (!m_network)
        return;
    sendToMembers(StatusTag, pack(m_generation, qint32(m_done), qint32(m_total), quint8(m_tint), frame(),
                                  encodeView(m_view)));
}

void SharedRender::finishTogether()
{
    if (!isRoot())
        return;
    const auto members = liveMembers();
    m_acksWaiting = QSet<int>(members.begin(), members.end());
    sendToMembers(FinishTag, pack(frame()));
    QTimer::singleShot(AckTimeoutMs, this, [this] {
        if (m_acksWaiting && !m_acksWaiting->isEmpty()) {
            qCWarning(lcMandelbrot) << "no answer from" << m_acksWaiting->size() << "member(s) within"
                                    << AckTimeoutMs / 1000 << "s";
            m_acksWaiting->clear();
            checkAcks();
        }
    });
    checkAcks();
}

void SharedRender::checkAcks()
{
    if (m_acksWaiting && m_acksWaiting->isEmpty()) {
        m_acksWaiting.reset();
        Q_EMIT finishedTogether();
    }
}

// ---------------------------------------------------------------- member

void SharedRender::checkComplete()
{
    if (isRoot() || m_total == 0 || m_done < m_total || frame() < m_statusFrame || m_completeReported == m_generation)
        return;
    m_completeReported = m_generation;
    Q_EMIT renderComplete(m_generation);
}

void SharedRender::checkFinish()
{
    if (isRoot() || !m_finishFrame || frame() < *m_finishFrame)
        return;
    m_finishFrame.reset();
    Q_EMIT finishing();
    send(AckTag, QByteArray());
    Q_EMIT finishedTogether();
}

} // namespace mmpi::demo
