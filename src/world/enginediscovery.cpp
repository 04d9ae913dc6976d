// The fallback chain of a discovered world (docs/guide/transports.md, "Join
// codes"): the steps of WorldConfig::discoverySteps in turn, by default
// DNS-SD (multicast DNS, which networks that drop broadcast often still
// carry), then the transport's own discovery (tcp: broadcast beacons), and
// when that brings nothing within its timeout, the join code and the typed
// address: a node sends its adverts straight to the root's addresses in the
// code or typed by a person, which reach the root where broadcasts do not
// (client isolation, routed subnets). A step keeps going once the next one
// starts: a late node still counts. The root runs the same steps, listening,
// to say why it heard nobody, and announces its world meanwhile for devices
// that have not chosen one (WorldBrowser).
#include "engine.h"

#include <mmpi/core/logging.h>
#include <mmpi/world/joincode.h>
#include <mmpi/world/rootaddress.h>

#include <QHostInfo>
#include <QMetaEnum>

namespace mmpi::detail {

namespace {

QString stepName(World::DiscoveryStep step)
{
    return QString::fromLatin1(QMetaEnum::fromType<World::DiscoveryStep>().valueToKey(int(step)));
}

} // namespace

Result<void> Engine::deriveJoinCodeKey()
{
    if (m_config.joinCode.isEmpty() || !m_config.worldKey.isEmpty())
        return success();
    auto code = JoinCode::parse(m_config.joinCode);
    if (!code)
        return code.error();
    m_config.worldKey = code->worldKey(m_config.worldName);
    return success();
}

bool Engine::skipsDiscoveryStep(World::DiscoveryStep step) const
{
    // Neither is a failure of the network.
    switch (step) {
    case World::DiscoveryStep::DnsSd:
        if (m_transport->supportsServiceDiscovery())
            return false;
        qCDebug(lcWorld).noquote() << "discovery: transport" << m_config.transport << "offers no DNS-SD";
        return true;
    case World::DiscoveryStep::Beacon:
        return false;
    case World::DiscoveryStep::JoinCode:
        return m_config.joinCode.isEmpty();
    case World::DiscoveryStep::Address:
        // The root needs no address: it listens for whoever has its own.
        return !m_formation.formsAsRoot() && m_config.rootAddresses.isEmpty();
    }
    return true;
}

void Engine::startNextDiscoveryStep()
{
    const bool root = m_formation.formsAsRoot();
    Error lastFailure;
    bool waiting = false;
    while (++m_discoveryStep < m_config.discoverySteps.size()) {
        const World::DiscoveryStep step = m_config.discoverySteps.at(m_discoveryStep);
        if (skipsDiscoveryStep(step))
            continue;
        Q_EMIT discoveryStepStarted(step);
        if (auto begun = beginDiscoveryStep(step); !begun) {
            // The next step may still work (port 5353 taken, no interface
            // that multicasts: the beacon may broadcast all the same).
            lastFailure = begun.error();
            giveUpDiscoveryStep(step, begun.error());
            continue;
        }
        ++m_liveSteps;
        // It waits for a person as long as formation lasts. The steps after
        // it wait too (validate()), and begin at once: either input may be
        // the one that reaches the root.
        if (WorldConfig::waitsForPerson(step)) {
            waiting = true;
            continue;
        }
        const auto timeout = step == World::DiscoveryStep::DnsSd ? m_config.dnsSdTimeout : m_config.beaconTimeout;
        m_stepTimer.start(std::min(timeout, m_config.formationTimeout));
        return;
    }
    if (waiting)
        return;
    // No step left to start. A root listening on one that began, or a node
    // advertising on one, waits on (formationTimeout names what is missing);
    // if none began at all nobody can ever be found.
    if (m_liveSteps == 0)
        fail(lastFailure.isError() ? lastFailure
                                   : Error(ErrorCode::DiscoveryFailed,
                                           QStringLiteral("no discovery step of %1 can run over transport %2")
                                               .arg(m_config.discoverySteps.size())
                                               .arg(m_config.transport)));
    else if (!root)
        qCInfo(lcWorld) << "discovery: no further step; advertising on until formation ends";
}

void Engine::endDeadDiscoveryStep(World::DiscoveryStep step, const Error &reason)
{
    giveUpDiscoveryStep(step, reason);
    --m_liveSteps;
    // Waiting for formationTimeout would only make the person wait for
    // nothing: no step that began can bring the root any more.
    const bool chainEnded = m_discoveryStep >= m_config.discoverySteps.size();
    if (m_liveSteps == 0 && chainEnded)
        fail(reason);
}

PeerAdvert Engine::ownAdvert() const
{
    return {m_config.worldName, m_nodeId, m_listenAddress, {}, m_config.size};
}

Result<void> Engine::beginDiscoveryStep(World::DiscoveryStep step)
{
    const bool root = m_formation.formsAsRoot();
    switch (step) {
    case World::DiscoveryStep::DnsSd:
        return root ? m_transport->browseServices(m_config.worldName) : m_transport->publishService(ownAdvert());
    case World::DiscoveryStep::Beacon:
        if (!root)
            return m_transport->advertise(ownAdvert());
        break;
    case World::DiscoveryStep::JoinCode:
        if (!root) {
            const auto code = JoinCode::parse(m_config.joinCode); // checked by validate()
            const QStringList contacts = code->beaconContacts();
            qCInfo(lcWorld).noquote() << "discovery: sending adverts to the join code's root at"
                                      << contacts.join(QStringLiteral(", "));
            return advertiseDirectlyTo(contacts);
        }
        qCInfo(lcWorld) << "discovery: waiting for nodes that send their adverts with the join code";
        break;
    case World::DiscoveryStep::Address:
        if (!root)
            return beginAddressStep();
        qCInfo(lcWorld) << "discovery: waiting for nodes that send their adverts to a typed address of this root";
        break;
    }
    // The root hears beacons, join-code and typed-address adverts on one listener.
    if (m_beaconListening)
        return success();
    if (auto started = m_transport->startDiscovery(m_config.worldName); !started)
        return started;
    m_beaconListening = true;
    return success();
}

Result<void> Engine::beginAddressStep()
{
    const quint16 port = RootAddress::beaconPort(m_config.transportOptions);
    QStringList contacts;
    for (const QString &text : std::as_const(m_config.rootAddresses)) {
        const auto address = RootAddress::parse(text, port); // checked by validate()
        if (!address->isName()) {
            contacts << address->contact();
            continue;
        }
        // Looked up now, not at validate(): the name may only resolve on
        // the network the device is on when the step begins.
        const QString name = address->host();
        const quint16 namedPort = address->port();
        const int id = QHostInfo::lookupHost(name, this, [this, name, namedPort](const QHostInfo &info) {
            const bool failed = info.error() != QHostInfo::NoError;
            handleRootAddressLookup(info.lookupId(), name, info.addresses(), failed ? info.errorString() : QString(),
                                    namedPort);
        });
        m_rootAddressLookups << id;
    }
    m_rootAddressFound = !contacts.isEmpty();
    qCInfo(lcWorld).noquote() << "discovery: sending adverts to the typed root addresses"
                              << m_config.rootAddresses.join(QStringLiteral(", "));
    return advertiseDirectlyTo(contacts);
}

void Engine::handleRootAddressLookup(int lookupId, const QString &name, const QList<QHostAddress> &found,
                                     const QString &why, quint16 port)
{
    if (!m_rootAddressLookups.removeOne(lookupId))
        return; // the search ended before the answer came
    QStringList contacts;
    for (const QHostAddress &address : found)
        // The root hears adverts over IPv4 only (RootAddress).
        if (address.protocol() == QAbstractSocket::IPv4Protocol)
            contacts << RootAddress::beaconContact(address, port);
    if (contacts.isEmpty()) {
        m_rootAddressMisses << QStringLiteral("no IPv4 address of root address '%1' found (%2)")
                                   .arg(name, why.isEmpty() ? QStringLiteral("it has IPv6 ones only") : why);
        qCInfo(lcWorld).noquote() << "discovery:" << m_rootAddressMisses.last();
    } else {
        qCInfo(lcWorld).noquote() << "discovery: root address" << name << "is" << contacts.join(QStringLiteral(", "));
    }
    if (auto sent = advertiseDirectlyTo(contacts); !sent) {
        m_rootAddressMisses << sent.error().message;
        contacts.clear();
    }
    m_rootAddressFound = m_rootAddressFound || !contacts.isEmpty();
    // One address that was found carries the adverts; a miss beside it is only logged.
    if (m_rootAddressLookups.isEmpty() && !m_rootAddressFound)
        endDeadDiscoveryStep(World::DiscoveryStep::Address,
                             Error(ErrorCode::DiscoveryFailed, m_rootAddressMisses.join(QStringLiteral("; "))));
}

Result<void> Engine::advertiseDirectlyTo(const QStringList &contacts)
{
    QStringList all = m_directContacts;
    for (const QString &contact : contacts)
        if (!all.contains(contact))
            all << contact;
    if (all == m_directContacts)
        return success();
    // The transport replaces the adverts it sends, so each call names all
    // of them; refused, the ones before keep going.
    if (auto sent = m_transport->advertiseTo(ownAdvert(), all); !sent)
        return sent;
    m_directContacts = all;
    return success();
}

void Engine::handleDiscoveryStepTimeout()
{
    const bool root = m_formation.formsAsRoot();
    const Step waiting = root ? Step::Discovering : Step::Advertising;
    if (m_formation.step() != waiting || m_discoveryStep >= m_config.discoverySteps.size())
        return;
    const World::DiscoveryStep step = m_config.discoverySteps.at(m_discoveryStep);
    // A root that heard nodes has nothing to explain; it still goes on to
    // the next step, for nodes whose own chain moved on to it.
    if (!root || !m_heardAdvert) {
        const bool dnsSd = step == World::DiscoveryStep::DnsSd;
        const QString what = root ? (dnsSd ? QStringLiteral("no DNS-SD answer of world '%1' heard")
                                           : QStringLiteral("no advert of world '%1' heard"))
                                  : (dnsSd ? QStringLiteral("no root of world '%1' answered this node's DNS-SD adverts")
                                           : QStringLiteral("no root of world '%1' answered this node's adverts"));
        const QString why = dnsSd ? QStringLiteral("multicast blocked, or no node there yet")
                                  : QStringLiteral("broadcasts blocked, or no node there yet");
        giveUpDiscoveryStep(step, Error(ErrorCode::DiscoveryTimedOut,
                                        QStringLiteral("%1 within %2 ms over transport %3 (%4)")
                                            .arg(what.arg(m_config.worldName))
                                            .arg(m_stepTimer.interval())
                                            .arg(m_config.transport, why)));
    }
    startNextDiscoveryStep();
}

void Engine::announceWorld(int joined)
{
    if (!m_transport || !m_transport->supportsWorldAnnouncements())
        return;
    const WorldAnnouncement announcement{m_config.worldName, m_nodeId, {}, {m_listenAddress}, joined, m_config.size};
    // Not a failure of formation: nodes that know the world's name find it all the same.
    if (auto announced = m_transport->announceWorld(announcement); !announced)
        qCInfo(lcWorld).noquote() << "discovery: world" << m_config.worldName
                                  << "not announced:" << announced.error().message;
}

void Engine::giveUpDiscoveryStep(World::DiscoveryStep step, const Error &reason)
{
    qCInfo(lcWorld).noquote() << "discovery: the" << stepName(step) << "step gave up:" << reason.message;
    Q_EMIT discoveryStepGaveUp(step, reason);
}

void Engine::stopDiscoverySteps()
{
    m_stepTimer.stop();
    m_discoveryStep = m_config.discoverySteps.size();
    if (!m_transport)
        return;
    m_transport->stopAnnouncingWorld();
    m_transport->stopBrowsing();
    m_transport->stopPublishing();
    m_transport->stopDiscovery();
    m_transport->stopAdvertising();
    m_beaconListening = false;
    m_directContacts.clear();
    for (const int lookup : std::as_const(m_rootAddressLookups))
        QHostInfo::abortHostLookup(lookup);
    m_rootAddressLookups.clear();
    m_rootAddressMisses.clear();
    m_rootAddressFound = false;
}

} // namespace mmpi::detail
