// mmpi::Intercommunicator: two disjoint groups that talk point-to-point
// across (MPI's intercommunicator, as the fault-tolerance paper suggests for
// manager/worker structures). rank()/size() are this node's own group;
// send/recv address the remote group's ranks. merge() makes one
// intracommunicator of both groups again. Collectives run on intracommunicators
// only (localCommunicator(), or merge()).
#pragma once

#include <mmpi/comm/communicator.h>

namespace mmpi {

class Intercommunicator : public Communicator
{
public:
    Intercommunicator() = default;

    // Collective over `local` (a group disjoint from the other side's): the
    // leaders, `localLeader` of `local` and `remoteLeader` of `peer` (a
    // communicator holding both leaders), introduce the groups to each other
    // over `peer` with `tag`, which must be free there (mpi4py's Create_intercomm).
    static Operation<Intercommunicator> create(const Communicator &local, int localLeader, const Communicator &peer,
                                               int remoteLeader, int tag);

    int remoteSize() const;
    // The world rank of each rank of the remote group.
    QList<int> remoteGroup() const;
    // The intracommunicator of this node's own group.
    Communicator localCommunicator() const;

    // Collective over both groups: one intracommunicator with the group that
    // passed high = false first (if both passed the same, the group whose
    // rank 0 has the lower world rank); ranks keep their order within a group.
    Operation<Communicator> merge(bool high) const;

private:
    friend struct detail::CommunicatorAccess;
    explicit Intercommunicator(std::shared_ptr<const Data> data) : Communicator(std::move(data)) {}
};

} // namespace mmpi
