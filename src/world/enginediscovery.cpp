// The fallback chain of a discovered world (docs/guide/transports.md, "Join
// codes"): the transport's own discovery first (tcp: broadcast beacons), and
// when that brings nothing within beaconTimeout, the join code: a node sends
// its adverts straight to the root's addresses in the code, which reach the
// root where broadcasts do not (client isolation, routed subnets). The root
// runs the same steps, to say why it heard nobody.
#include "engine.h"

#include <mmpi/core/logging.h>
#include <mmpi/world/joincode.h>

namespace mmpi::detail {

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

void Engine::startBeaconStep()
{
    Q_EMIT discoveryStepStarted(World::DiscoveryStep::Beacon);
    m_beaconTimer.start(std::min(m_config.beaconTimeout, m_config.formationTimeout));
}

void Engine::handleBeaconTimeout()
{
    const bool root = m_formation.formsAsRoot();
    const Step waiting = root ? Step::Discovering : Step::Advertising;
    if (m_formation.step() != waiting || (root && m_heardAdvert))
        return;
    const QString what = root ? QStringLiteral("no advert of world '%1' heard")
                              : QStringLiteral("no root of world '%1' answered this node's adverts");
    const Error reason(ErrorCode::DiscoveryTimedOut,
                       QStringLiteral("%1 within %2 ms over transport %3 (broadcasts blocked, or no node there yet)")
                           .arg(what.arg(m_config.worldName))
                           .arg(m_config.beaconTimeout.count())
                           .arg(m_config.transport));
    qCInfo(lcWorld).noquote() << "discovery: the beacon step gave up:" << reason.message;
    Q_EMIT discoveryStepGaveUp(World::DiscoveryStep::Beacon, reason);
    if (m_config.joinCode.isEmpty())
        return; // the beacon goes on: a node may still come within formationTimeout
    Q_EMIT discoveryStepStarted(World::DiscoveryStep::JoinCode);
    if (root) {
        qCInfo(lcWorld) << "discovery: waiting for nodes that send their adverts with the join code";
        return;
    }
    const auto code = JoinCode::parse(m_config.joinCode); // checked by validate()
    const QStringList contacts = code->beaconContacts();
    qCInfo(lcWorld).noquote() << "discovery: sending adverts to the join code's root at"
                              << contacts.join(QStringLiteral(", "));
    if (auto sent = m_transport->advertiseTo({m_config.worldName, m_nodeId, m_listenAddress, {}}, contacts); !sent)
        fail(sent.error());
}

} // namespace mmpi::detail
