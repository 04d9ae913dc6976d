#include "formationstate.h"

#include <mmpi/world/worldconfig.h>

namespace mmpi::detail {

namespace {

using Role = FormationState::Role;
using Step = FormationState::Step;

// Each role's way through the world (docs/design/formation.md#roles-and-steps), by Role.
const QList<Step> &wayOf(Role role)
{
    using enum Step;
    static const QList<Step> ways[] = {
        {Idle, OpeningTransport, AwaitingJoins, AwaitingMeshReady, Formed, Closing, Closed},
        {Idle, OpeningTransport, Discovering, AwaitingMeshReady, Formed, Closing, Closed},
        {Idle, OpeningTransport, ContactingRoot, AwaitingRankTable, LinkingMesh, AwaitingStart, Formed, Closing, Closed},
        {Idle, OpeningTransport, Advertising, AwaitingRankTable, LinkingMesh, AwaitingStart, Formed, Closing, Closed},
        {Idle, OpeningTransport, ContactingRoot, AwaitingRankTable, LinkingSurvivors, Formed, Closing, Closed},
        {Idle, OpeningTransport, Advertising, AwaitingRankTable, LinkingSurvivors, Formed, Closing, Closed},
    };
    return ways[int(role)];
}

// The steps after the forming ones are World's states, in its order.
static_assert(int(Step::Failed) - int(Step::Formed) == int(World::State::Failed) - int(World::State::Formed));

} // namespace

FormationState::Role FormationState::roleFor(const WorldConfig &config)
{
    const bool discovered = config.mode == WorldConfig::Mode::Discovered;
    if (config.rejoin)
        return Role::Replacement;
    if (config.isRoot())
        return discovered ? Role::DiscoveredRoot : Role::LaunchedRoot;
    return discovered ? Role::DiscoveredMember : Role::LaunchedMember;
}

bool FormationState::hasRankTable() const
{
    const QList<Step> &way = wayOf(m_role);
    const qsizetype table = way.indexOf(Step::AwaitingRankTable);
    return table >= 0 && way.indexOf(m_step) > table;
}

World::State FormationState::worldState() const
{
    if (m_step == Step::Idle)
        return World::State::Idle;
    if (m_step < Step::Formed)
        return World::State::Forming;
    return World::State(int(World::State::Formed) + int(m_step) - int(Step::Formed));
}

bool FormationState::canMoveTo(Step next) const
{
    if (next == Step::Failed)
        return worldState() == World::State::Forming;
    if (next == Step::Closed && (m_step == Step::Idle || m_step == Step::Failed))
        return true;
    // A replacement whose contact is lost before the rank table came asks another member.
    if (m_role == Role::Replacement && m_step == Step::AwaitingRankTable && next == Step::ContactingRoot)
        return true;
    const QList<Step> &way = wayOf(m_role);
    const qsizetype from = way.indexOf(m_step);
    return from >= 0 && from + 1 < way.size() && way.at(from + 1) == next;
}

bool FormationState::moveTo(Step next)
{
    if (!canMoveTo(next))
        return false;
    m_step = next;
    return true;
}

bool FormationState::becomeSpare()
{
    if (m_role != Role::DiscoveredMember || m_step != Step::Advertising)
        return false;
    m_role = Role::Spare;
    return true;
}

} // namespace mmpi::detail
