// Test fixture: formed in-process worlds of several sizes (a CommWorld each,
// over the local transport), kept for a whole test program so that every
// collective runs at every size without forming a world per check.
#pragma once

#include "commworld.h"

#include <QList>

#include <map>
#include <memory>

namespace mmpi::test {

class CommWorlds
{
public:
    explicit CommWorlds(const QList<int> &sizes)
    {
        for (int n : sizes) {
            m_worlds[n] = std::make_unique<CommWorld>(QStringLiteral("local"), n);
            m_formed = m_formed && m_worlds[n]->formed();
        }
    }
    bool formed() const { return m_formed; }
    const CommWorld &sized(int n) const { return *m_worlds.at(n); }
    // Smallest first.
    QList<const CommWorld *> all() const
    {
        QList<const CommWorld *> worlds;
        for (const auto &[n, world] : m_worlds)
            worlds.append(world.get());
        return worlds;
    }

private:
    std::map<int, std::unique_ptr<CommWorld>> m_worlds;
    bool m_formed = true;
};

} // namespace mmpi::test
