#include "lobby.h"

#include "qmlworld.h"

#include <mmpi/transport/interfacefilter.h>
#include <mmpi/world/joincode.h>
#include <mmpi/world/rootaddress.h>

#include <QBuffer>
#include <QRegularExpression>

namespace mmpi {

Lobby::Lobby(QObject *parent)
    : QObject(parent),
      m_pendingJoins(new JoinRequestModel(this)),
      m_browser(new WorldBrowser(this)),
      m_foundWorlds(new WorldListModel(m_browser, this))
{
}

void Lobby::setWorld(QmlWorld *world)
{
    if (m_world == world)
        return;
    if (m_world)
        disconnect(m_world, nullptr, this, nullptr);
    m_world = world;
    // Requests of another world are not this one's to answer.
    m_pendingJoins->clear();
    if (world) {
        connect(world, &QmlWorld::joinedChanged, this, &Lobby::reevaluate);
        connect(world, &QmlWorld::stateChanged, this, &Lobby::reevaluate);
        connect(world, &QObject::destroyed, this, &Lobby::reevaluate);
        watchJoinRequests(world);
        watchDiscovery(world);
    }
    m_gaveUp.clear();
    Q_EMIT worldChanged();
    reevaluate();
    updateJoinCode();
    updateRootAddresses();
    followBrowsingSettings();
}

void Lobby::setWanted(int wanted)
{
    if (m_wanted == wanted)
        return;
    m_wanted = qMax(1, wanted);
    Q_EMIT wantedChanged();
    reevaluate();
}

void Lobby::reevaluate()
{
    const int joined = m_world ? m_world->joined() : 0;
    const bool ready = m_world && m_world->state() == QmlWorld::State::Formed && joined >= m_wanted;
    if (joined != m_joined) {
        m_joined = joined;
        Q_EMIT joinedChanged();
    }
    if (ready != m_ready) {
        m_ready = ready;
        Q_EMIT readyChanged();
        if (ready)
            Q_EMIT allJoined();
    }
}

void Lobby::watchJoinRequests(QmlWorld *world)
{
    connect(world, &QmlWorld::joinRequested, m_pendingJoins, &JoinRequestModel::add);
    connect(world, &QmlWorld::joinRequestEnded, m_pendingJoins, &JoinRequestModel::remove);
    connect(world, &QObject::destroyed, m_pendingJoins, &JoinRequestModel::clear);
}

bool Lobby::confirm(int requestId)
{
    return answer(requestId, true);
}

bool Lobby::reject(int requestId)
{
    return answer(requestId, false);
}

bool Lobby::answer(int requestId, bool confirmed)
{
    World *world = m_world ? m_world->world() : nullptr;
    if (!world) {
        setErrorString(QStringLiteral("no join request %1: the lobby's world has not started").arg(requestId));
        return false;
    }
    const Result<void> answered = confirmed ? world->confirmJoin(requestId) : world->rejectJoin(requestId);
    setErrorString(answered ? QString() : answered.error().message);
    return bool(answered);
}

void Lobby::setErrorString(const QString &message)
{
    if (m_errorString == message)
        return;
    m_errorString = message;
    Q_EMIT errorStringChanged();
}

void Lobby::setBrowsing(bool on)
{
    if (on == m_browsing)
        return;
    m_browsing = on;
    followBrowsingSettings();
    Q_EMIT browsingChanged();
}

void Lobby::followBrowsingSettings()
{
    const QString transport = m_world ? m_world->transport() : QStringLiteral("tcp");
    const QVariantMap options = m_world ? m_world->transportOptions() : QVariantMap();
    const bool current = m_browser->isBrowsing() && transport == m_browseTransport && options == m_browseOptions;
    if (m_browsing && current)
        return;
    // Also when browsing could not start: the World's new settings may let it.
    m_browser->stop();
    m_browseError.clear();
    m_browseTransport.clear();
    if (m_browsing) {
        if (auto started = m_browser->start(transport, options); !started)
            m_browseError = started.error().message;
        m_browseTransport = transport;
        m_browseOptions = options;
    }
    updateNothingFoundReason();
}

bool Lobby::pick(int row)
{
    const auto found = m_browser->world(m_foundWorlds->rootIdAt(row));
    if (!m_world || !found) {
        setErrorString(!m_world ? QStringLiteral("the lobby has no World to join with")
                                : QStringLiteral("no world in row %1 of %2").arg(row).arg(m_foundWorlds->rowCount()));
        return false;
    }
    m_world->setMode(QmlWorld::Mode::Discovered);
    m_world->setRequestedRank(NoRank);
    m_world->setWorldName(found->name);
    m_world->setExpectedSize(std::max(1, found->wanted));
    const bool started = m_world->start();
    setErrorString(started ? QString() : m_world->errorString());
    return started;
}

bool Lobby::makeJoinCode()
{
    if (!m_world) {
        setErrorString(QStringLiteral("the lobby has no World to make a join code for"));
        return false;
    }
    const QVariantMap options = m_world->transportOptions();
    const InterfaceFilter filter(options.value(QStringLiteral("interfaces")).toStringList());
    const auto code =
        JoinCode::generate(JoinCode::codeAddresses(filter.addresses()), RootAddress::beaconPort(options));
    if (!code) {
        setErrorString(code.error().message);
        return false;
    }
    m_world->setJoinCode(code->toString());
    setErrorString({});
    return true;
}

void Lobby::watchDiscovery(QmlWorld *world)
{
    connect(world, &QmlWorld::discoveryStepGaveUp, this, &Lobby::noteGaveUp);
    connect(world, &QmlWorld::settingsChanged, this, &Lobby::updateJoinCode);
    connect(world, &QmlWorld::settingsChanged, this, &Lobby::updateRootAddresses);
    connect(world, &QmlWorld::settingsChanged, this, &Lobby::followBrowsingSettings);
    // A new formation is a new search: the reasons before are the last one's.
    connect(world, &QmlWorld::stateChanged, this, [this](QmlWorld::State state) {
        if (state == QmlWorld::State::Forming || state == QmlWorld::State::Formed) {
            m_gaveUp.clear();
            updateNothingFoundReason();
        }
    });
}

void Lobby::noteGaveUp(const QString &step, const QString &reason)
{
    m_gaveUp << QStringLiteral("%1: %2").arg(step, reason);
    updateNothingFoundReason();
}

void Lobby::updateNothingFoundReason()
{
    QStringList reasons = m_gaveUp;
    if (!m_browseError.isEmpty())
        reasons.prepend(QStringLiteral("Browsing: %1").arg(m_browseError));
    const QString text = reasons.join(u'\n');
    if (text == m_nothingFoundReason)
        return;
    m_nothingFoundReason = text;
    Q_EMIT nothingFoundReasonChanged();
}

void Lobby::updateJoinCode()
{
    const auto code = JoinCode::parse(m_world ? m_world->joinCode() : QString());
    const QString text = code ? code->toString() : QString();
    if (text == m_joinCode)
        return;
    m_joinCode = text;
    m_joinCodeImage.clear();
    // A data URL: an Image shows it without an image provider the app would
    // have to add to its engine.
    if (const QImage image = code ? code->toQrImage() : QImage(); !image.isNull()) {
        QBuffer png;
        png.open(QIODevice::WriteOnly);
        image.save(&png, "PNG");
        m_joinCodeImage = QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png.data().toBase64());
    }
    Q_EMIT joinCodeChanged();
}

void Lobby::setRootAddresses(const QStringList &typed)
{
    if (!m_world) {
        setErrorString(QStringLiteral("the lobby has no World to give the root's addresses to"));
        return;
    }
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    QStringList addresses;
    for (const QString &entry : typed)
        addresses << entry.split(separators, Qt::SkipEmptyParts);
    // Judged as start() will judge them, so that the person hears of a
    // typo while still at the field.
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transportOptions = m_world->transportOptions();
    config.rootAddresses = addresses;
    const auto valid = config.validateRootAddresses();
    setErrorString(valid ? QString() : valid.error().message);
    m_world->setRootAddresses(addresses); // updateRootAddresses() follows
}

void Lobby::updateRootAddresses()
{
    const QStringList addresses = m_world ? m_world->rootAddresses() : QStringList();
    if (addresses == m_rootAddresses)
        return;
    m_rootAddresses = addresses;
    Q_EMIT rootAddressesChanged();
}

} // namespace mmpi
