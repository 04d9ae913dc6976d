#include "cpubinding.h"

#ifdef Q_OS_LINUX
#include <sched.h>
#endif

namespace mmpi::tools {

namespace {

// --bind-to auto binds when each node gets a CPU of its own, or every CPU
// the same number of nodes; node r on the (r mod cpus)-th CPU.
bool bindsInTurn(int nodes, int cpus)
{
    return nodes >= 2 && cpus >= 2 && (nodes <= cpus || nodes % cpus == 0);
}

} // namespace

std::optional<Binding> parseBinding(const QString &text)
{
    if (text == QLatin1String("auto"))
        return Binding::Auto;
    if (text == QLatin1String("core"))
        return Binding::Core;
    if (text == QLatin1String("none"))
        return Binding::None;
    return std::nullopt;
}

QList<int> allowedCpus()
{
    QList<int> cpus;
#ifdef Q_OS_LINUX
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0)
        return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set))
            cpus.append(cpu);
    }
#endif
    return cpus;
}

QList<int> planBinding(Binding binding, int nodes, const QList<int> &cpus)
{
    const bool bind = binding == Binding::Core || (binding == Binding::Auto && bindsInTurn(nodes, int(cpus.size())));
    if (!bind || cpus.isEmpty())
        return {};
    QList<int> plan;
    for (int rank = 0; rank < nodes; ++rank)
        plan.append(cpus.at(rank % cpus.size()));
    return plan;
}

void bindThisProcessTo(int cpu)
{
#ifdef Q_OS_LINUX
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof set, &set);
#else
    (void)cpu;
#endif
}

} // namespace mmpi::tools
