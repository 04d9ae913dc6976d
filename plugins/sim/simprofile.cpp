#include "simprofile.h"

#include <QStringList>

namespace mmpi {

QList<SimProfile> SimProfile::builtIns()
{
    // The derivation of these numbers is in docs/guide/transports.md; keep both in step.
    return {
        {QStringLiteral("bluetooth"), 30, 90000},
        {QStringLiteral("bluetooth-edr"), 10, 250000},
        {QStringLiteral("wifi"), 2, 5000000},
        {QStringLiteral("ideal"), 0, 0},
    };
}

std::optional<SimProfile> SimProfile::builtIn(const QString &name)
{
    for (const SimProfile &profile : builtIns())
        if (profile.name == name)
            return profile;
    return std::nullopt;
}

QStringList SimProfile::builtInNames()
{
    QStringList names;
    for (const SimProfile &profile : builtIns())
        names << profile.name;
    return names;
}

} // namespace mmpi
