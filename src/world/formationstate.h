// FormationState: how this node comes into its world (its role, fixed when
// formation starts; an advertising node may become a spare) and where it has
// got to (its step). The engine moves the step; this says which moves are allowed.
#pragma once

#include <mmpi/world/world.h>

#include <QMetaEnum>

namespace mmpi::detail {

class FormationState
{
    Q_GADGET
public:
    enum class Role {
        LaunchedRoot,     // rank 0 at a known address; the others join it
        DiscoveredRoot,   // contacts the nodes advertising its world, gives them ranks
        LaunchedMember,   // a given rank that joins the root at its address
        DiscoveredMember, // advertises its world until a root (or a member, inviting) contacts it
        Replacement,      // launched to take a lost member's rank (WorldConfig::rejoin)
        Spare,            // an advertising node a member invited to take a lost member's rank
    };
    Q_ENUM(Role)
    enum class Step {
        Idle,
        OpeningTransport,
        AwaitingJoins,     // launched root: until every rank has joined
        Discovering,       // discovered root: until enough advertising nodes have joined
        ContactingRoot,    // dialling the root, or a survivor, until it admits this node
        Advertising,       // until a root or an inviting member contacts this node
        AwaitingRankTable, // joined; the contact's rank table has not come
        LinkingMesh,       // linking to every other rank (MeshReady when done)
        AwaitingMeshReady, // root: the table is out; until every node's MeshReady
        AwaitingStart,     // MeshReady sent; until the root's Start
        LinkingSurvivors,  // replacement, spare: until every member still there admits it
        Formed, // these last four are World::State's, in its order (worldState())
        Closing,
        Closed,
        Failed,
    };
    Q_ENUM(Step)

    static Role roleFor(const WorldConfig &config);
    explicit FormationState(Role role) : m_role(role) {}

    Role role() const { return m_role; }
    Step step() const { return m_step; }
    // Rank 0 of a launched world forms it, except a replacement of rank 0,
    // which joins the formed world through a survivor like any replacement.
    bool formsAsRoot() const { return m_role == Role::LaunchedRoot || m_role == Role::DiscoveredRoot; }
    bool rejoining() const { return m_role == Role::Replacement || m_role == Role::Spare; }
    // Given the rank table by its contact (never on a root, which makes it).
    bool hasRankTable() const;
    World::State worldState() const;
    // The next step on the role's way (on to Formed, Closing, Closed), Failed
    // while forming, Closed before forming or after failing, and for a
    // replacement back from AwaitingRankTable to ContactingRoot; nothing else.
    bool canMoveTo(Step next) const;
    bool moveTo(Step next);
    // An advertising discovered member that a member invites becomes a spare.
    bool becomeSpare();

    template<typename Enum>
    static const char *name(Enum value) { return QMetaEnum::fromType<Enum>().valueToKey(int(value)); }

private:
    Role m_role;
    Step m_step = Step::Idle;
};

} // namespace mmpi::detail
