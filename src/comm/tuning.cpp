#include <mmpi/comm/tuning.h>

#include "collectives/communicatoraccess.h"
#include "collectives/router.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/world/world.h>

namespace mmpi {

using detail::CommunicatorAccess;

std::optional<BcastPlan> lastBcastPlan(const Communicator &comm)
{
    const auto &data = CommunicatorAccess::data(comm);
    return data ? data->router->lastBcastPlan() : std::nullopt;
}

std::optional<AllreduceAlgorithm> lastAllreduceAlgorithm(const Communicator &comm)
{
    const auto &data = CommunicatorAccess::data(comm);
    return data ? data->router->lastAllreduceAlgorithm() : std::nullopt;
}

LinkModel linkModel(const Communicator &comm)
{
    const auto &data = CommunicatorAccess::data(comm);
    if (!data)
        return {};
    QList<int> peers = data->members();
    peers.removeAll(data->world->rank());
    return data->router->links().model(peers);
}

void setLinkModel(const Communicator &comm, std::optional<LinkModel> model)
{
    if (const auto &data = CommunicatorAccess::data(comm))
        data->router->links().setFixedModel(model);
}

} // namespace mmpi
