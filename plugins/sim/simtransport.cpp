#include "simtransport.h"

#include "simlink.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/optionreader.h>

#include <QDir>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#ifdef Q_OS_UNIX
#include <unistd.h>
#endif

namespace mmpi {

namespace {

const QString SimScheme = QStringLiteral("sim://");
const QString LocalScheme = QStringLiteral("local://");

constexpr qint64 DefaultQueueLimit = 64LL * 1024 * 1024;
constexpr qint64 MinQueueLimit = 64LL * 1024;
constexpr qint64 MaxQueueLimit = 16LL * 1024 * 1024 * 1024;
// 10 GB/s: far beyond any radio; larger numbers are typos.
constexpr qint64 MaxBandwidth = 10LL * 1000 * 1000 * 1000;
constexpr qint64 MaxLatencyMs = 60000;

// The server name is the same on both sides; only the scheme tells them apart.
Result<QString> toLocalAddress(const QString &simAddress)
{
    if (!simAddress.startsWith(SimScheme) || simAddress.size() == SimScheme.size())
        return Error(ErrorCode::BadAddress,
                     QStringLiteral("malformed sim address '%1'; expected sim://<name>").arg(simAddress));
    return LocalScheme + simAddress.mid(SimScheme.size());
}

QString toSimAddress(const QString &localAddress)
{
    return localAddress.startsWith(LocalScheme) ? SimScheme + localAddress.mid(LocalScheme.size())
                                                : localAddress;
}

// The local transport's messages name local:// addresses the caller never saw.
Error translated(Error error)
{
    error.message.replace(QStringLiteral("local address"), QStringLiteral("sim address"));
    error.message.replace(LocalScheme, SimScheme);
    return error;
}

QString seconds(std::chrono::milliseconds ms)
{
    return QString::number(double(ms.count()) / 1000.0);
}

} // namespace

SimTransport::SimTransport(Transport *local, QObject *parent)
    : Transport(parent), m_local(local), m_radio(this), m_profile(*SimProfile::builtIn(QStringLiteral("bluetooth")))
{
    Q_ASSERT(local);
    local->setParent(this);
    m_radio.setShape(m_profile.latencyMs, m_profile.bandwidth);
    connect(local, &Transport::incomingLink, this, &SimTransport::handleIncomingLink);
    connect(local, &Transport::peerDiscovered, this, [this](const PeerAdvert &advert) {
        PeerAdvert sim = advert;
        sim.address = toSimAddress(advert.address);
        Q_EMIT peerDiscovered(sim);
    });
    connect(local, &Transport::discoveryProgress, this, &Transport::discoveryProgress);
    connect(local, &Transport::errorOccurred, this,
            [this](const Error &error) { Q_EMIT errorOccurred(translated(error)); });
    // Sim adverts live apart from the local transport's, so that a sim world
    // never takes in an unshaped local node.
    if (auto configured = local->configure({{QStringLiteral("discoveryDir"), defaultDiscoveryDirectory()}});
        !configured)
        qCWarning(lcTransport).noquote() << "sim:" << configured.error().toString();
}

SimTransport::~SimTransport() = default;

// Not QStandardPaths: it warns on every call where XDG_RUNTIME_DIR is unset,
// and every sim transport needs the directory when it is made.
QString SimTransport::defaultDiscoveryDirectory()
{
    QString base = qEnvironmentVariable("XDG_RUNTIME_DIR");
    if (base.isEmpty())
        base = QDir::tempPath();
    return base + QStringLiteral("/mmpi-sim-discovery");
}

// Exactly what the radio does to a frame: one way it waits the latency,
// and it leaves at the bandwidth. `ideal` shapes nothing, so its links are
// the local transport's underneath: loopback.
LinkMedium SimTransport::expectedLink() const
{
    LinkMedium medium = LinkMedium::loopback();
    medium.name = m_profile.name;
    if (m_profile.latencyMs > 0)
        medium.latencyUs = double(m_profile.latencyMs) * 1000.0;
    if (m_profile.bandwidth > 0) {
        medium.bytesPerUs = double(m_profile.bandwidth) / 1e6;
        medium.overheadUs = 0.0; // lost in the radio's time per frame
    }
    return medium;
}

Result<void> SimTransport::configure(const QVariantMap &options)
{
    OptionReader reader(name(), options);
    const QString linkName = reader.string(QStringLiteral("link"), QStringLiteral("bluetooth"));
    std::optional<SimProfile> profile = SimProfile::builtIn(linkName);
    if (!profile) {
        reader.reject(QStringLiteral("link"), QStringLiteral("unknown link profile '%1' (known: %2)")
                                                  .arg(linkName, SimProfile::builtInNames().join(QStringLiteral(", "))));
        profile = m_profile;
    }
    profile->latencyMs = reader.integer(QStringLiteral("latencyMs"), profile->latencyMs, 0, MaxLatencyMs);
    profile->bandwidth = reader.integer(QStringLiteral("bandwidth"), profile->bandwidth, 0, MaxBandwidth);
    const qint64 queueLimit = reader.integer(QStringLiteral("queueLimit"), DefaultQueueLimit, MinQueueLimit,
                                             MaxQueueLimit);
    const int rank = int(reader.integer(QStringLiteral("rank"), -1, 0, SimFault::MaxRank));
    const int worldSize = int(reader.integer(QStringLiteral("worldSize"), 0, 1, SimFault::MaxRank + 1));

    QList<SimFault> faults;
    for (const QString &text : reader.stringList(QStringLiteral("faults"), {})) {
        auto fault = SimFault::parse(text);
        if (!fault) {
            reader.reject(QStringLiteral("faults"), fault.error().message);
        } else if (worldSize > 0 && fault->rank >= worldSize) {
            reader.reject(QStringLiteral("faults"),
                          QStringLiteral("fault '%1' names rank %2, but the world has %3 node(s)")
                              .arg(fault->text).arg(fault->rank).arg(worldSize));
        } else if (fault->rank == rank || rank < 0) {
            faults << *fault;
        }
    }
    if (!faults.isEmpty() && rank < 0)
        reader.reject(QStringLiteral("faults"),
                      QStringLiteral("fault events need this node's rank: set the option 'rank'"));

    const QVariantMap localOptions{
        {QStringLiteral("discoveryDir"), reader.string(QStringLiteral("discoveryDir"), defaultDiscoveryDirectory())},
        {QStringLiteral("discoveryInterval"), reader.integer(QStringLiteral("discoveryInterval"), 200, 10, 60000)},
        {QStringLiteral("maxFrameSize"), reader.decoderLimits().maxFrameSize},
    };
    if (auto ok = reader.finish(); !ok)
        return ok;
    if (auto ok = m_local->configure(localOptions); !ok)
        return translated(ok.error());

    m_profile = *profile;
    m_radio.setShape(m_profile.latencyMs, m_profile.bandwidth);
    m_radio.setQueueLimit(queueLimit);
    m_rank = rank;
    m_faults = faults;
    startFaults();
    qCDebug(lcTransport).noquote() << "sim: link" << m_profile.name << "latency" << m_profile.latencyMs
                                   << "ms, bandwidth" << m_profile.bandwidth << "bytes/s, rank" << m_rank
                                   << "faults" << faultTexts();
    return success();
}

QStringList SimTransport::faultTexts() const
{
    QStringList texts;
    for (const SimFault &fault : m_faults)
        texts << fault.text;
    return texts;
}

// The script's clock starts now: World::form() configures its transport first
// thing, so fault times count from the start of formation on that node.
void SimTransport::startFaults()
{
    qDeleteAll(std::exchange(m_faultTimers, {}));
    if (m_outOfRange > 0) {
        m_outOfRange = 0;
        leaveOutOfRange();
    }
    for (const SimFault &fault : std::as_const(m_faults)) {
        auto *timer = new QTimer(this);
        timer->setSingleShot(true);
        timer->setTimerType(Qt::PreciseTimer);
        connect(timer, &QTimer::timeout, this, [this, fault] { handleFault(fault); });
        timer->start(fault.at);
        m_faultTimers << timer;
    }
}

void SimTransport::handleFault(const SimFault &fault)
{
    switch (fault.kind) {
    case SimFault::Kind::IoError:
        qCWarning(lcTransport).noquote() << "sim: rank" << m_rank << "has an I/O error (fault '" + fault.text + "')";
        breakLinks(QStringLiteral("simulated I/O error on rank %1 (fault '%2')").arg(m_rank).arg(fault.text));
        return;
    case SimFault::Kind::OutOfRange:
        return enterOutOfRange(fault);
    case SimFault::Kind::Terminates:
        terminateProcess(fault);
    }
}

void SimTransport::breakLinks(const QString &reason)
{
    m_radio.dropAll();
    const QList<QPointer<SimLink>> links = std::exchange(m_links, {});
    for (const QPointer<SimLink> &link : links) {
        if (!link || link->state() == Link::State::Closed)
            continue;
        if (link->state() == Link::State::Connecting)
            link->fail(Error(ErrorCode::ConnectFailed,
                             QStringLiteral("cannot connect to %1: %2").arg(link->peerAddress(), reason)));
        else
            link->fail(Error(ErrorCode::LinkError, reason));
    }
}

void SimTransport::enterOutOfRange(const SimFault &fault)
{
    auto *end = new QTimer(this);
    end->setSingleShot(true);
    end->setTimerType(Qt::PreciseTimer);
    connect(end, &QTimer::timeout, this, [this] {
        if (m_outOfRange > 0 && --m_outOfRange == 0)
            leaveOutOfRange();
    });
    end->start(fault.duration);
    m_faultTimers << end;
    if (m_outOfRange++ > 0)
        return; // already away; the later window end brings it back
    qCWarning(lcTransport).noquote() << "sim: rank" << m_rank << "goes out of range for"
                                     << seconds(fault.duration) << "s (fault '" + fault.text + "')";
    m_outOfRangeReason = QStringLiteral("rank %1 is out of range (fault '%2')").arg(m_rank).arg(fault.text);
    breakLinks(m_outOfRangeReason);
    // Nobody can reach us, but the app still runs: peers' connects are taken
    // and dropped at once (handleIncomingLink), a page nobody answers, never
    // refused as if the app had ended (which ends reconnection at once).
}

void SimTransport::leaveOutOfRange()
{
    qCWarning(lcTransport).noquote() << "sim: rank" << m_rank << "is back in range";
}

// An app that crashes or is killed gives no goodbye and runs no destructors:
// SIGKILL is what the operating system does to it.
void SimTransport::terminateProcess(const SimFault &fault)
{
    qCCritical(lcTransport).noquote() << "sim: rank" << m_rank
                                      << "terminates now, as an app crash (fault '" + fault.text + "')";
    std::fflush(stderr);
#ifdef Q_OS_UNIX
    ::kill(::getpid(), SIGKILL);
#endif
    std::abort();
}

Result<QString> SimTransport::listen(const QString &address)
{
    if (m_outOfRange > 0)
        return Error(ErrorCode::ListenFailed,
                     QStringLiteral("cannot listen while %1").arg(m_outOfRangeReason));
    QString localAddress;
    if (!address.isEmpty()) {
        auto parsed = toLocalAddress(address);
        if (!parsed)
            return parsed.error();
        localAddress = *parsed;
    }
    auto listening = m_local->listen(localAddress);
    if (!listening)
        return translated(listening.error());
    m_serverName = listening->mid(LocalScheme.size());
    return listenAddress();
}

QString SimTransport::listenAddress() const
{
    return m_serverName.isEmpty() ? QString() : SimScheme + m_serverName;
}

void SimTransport::stopListening()
{
    m_serverName.clear();
    m_local->stopListening();
}

Result<Link *> SimTransport::connectTo(const QString &address)
{
    auto localAddress = toLocalAddress(address);
    if (!localAddress)
        return localAddress.error();
    if (m_outOfRange > 0)
        return SimLink::refused(address,
                                Error(ErrorCode::ConnectFailed,
                                      QStringLiteral("cannot connect to %1: %2").arg(address, m_outOfRangeReason)),
                                this);
    auto inner = m_local->connectTo(*localAddress);
    if (!inner)
        return translated(inner.error());
    return adopt(*inner, address);
}

SimLink *SimTransport::adopt(Link *inner, const QString &peerAddress)
{
    auto *link = new SimLink(inner, peerAddress, &m_radio, this);
    m_links.removeIf([](const QPointer<SimLink> &l) { return l.isNull() || l->state() == Link::State::Closed; });
    m_links << link;
    return link;
}

void SimTransport::handleIncomingLink(Link *inner)
{
    // The server is closed while out of range; a connect that slipped in
    // just before is refused like the ones after.
    if (m_outOfRange > 0) {
        inner->close();
        inner->deleteLater();
        return;
    }
    Q_EMIT incomingLink(adopt(inner, toSimAddress(inner->peerAddress())));
}

Result<void> SimTransport::advertise(const PeerAdvert &advert)
{
    PeerAdvert local = advert;
    auto address = toLocalAddress(advert.address.isEmpty() ? listenAddress() : advert.address);
    if (!address)
        return address.error();
    local.address = *address;
    if (auto advertised = m_local->advertise(local); !advertised)
        return translated(advertised.error());
    return success();
}

void SimTransport::stopAdvertising()
{
    m_local->stopAdvertising();
}

Result<void> SimTransport::startDiscovery(const QString &worldName)
{
    if (auto started = m_local->startDiscovery(worldName); !started)
        return translated(started.error());
    return success();
}

void SimTransport::stopDiscovery()
{
    m_local->stopDiscovery();
}

} // namespace mmpi
