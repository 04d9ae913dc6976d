// Test harness: several Worlds of one world in this process, each with its own
// progress thread, over loopback (tcp), local sockets or the sim transport
// (over local sockets), with isolated discovery (a free beacon port or a
// private discovery directory).
#pragma once

#include <mmpi/world/world.h>

#include <QTemporaryDir>

#include <memory>
#include <vector>

namespace mmpi::test {

class WorldHarness
{
public:
    WorldHarness(const QString &transport, WorldConfig::Mode mode);

    // A config for `rank` of a world of `size` (discovered: rank 0 is the root,
    // every other index becomes a NoRank node).
    WorldConfig config(int index, int size) const;
    QString transport() const { return m_transport; }
    // Options every later config() carries besides the harness's own (e.g.
    // the sim transport's link profile).
    void addTransportOptions(const QVariantMap &options);

    // Start a World for each config; they are kept until the harness dies.
    // A `sink` is set before the world forms.
    World *start(const WorldConfig &config, std::shared_ptr<MessageSink> sink = nullptr);
    // Destroy a world without close(): its peers see the links drop.
    void destroy(World *world);

    // Send one frame from every formed world to every rank (itself included)
    // and check that each arrives once with the right source and payload.
    bool allToAllWorks(const std::vector<World *> &worlds, QString *problem);
    // A free loopback port of the given kind.
    static quint16 freeTcpPort();
    static quint16 freeUdpPort();
    // Shuts down every connected TCP socket of this process (all the worlds
    // live here): each end sees its link fail, as when a cable is pulled.
    // Returns how many it shut down.
    static int breakTcpLinks();

private:
    QString m_transport;
    WorldConfig::Mode m_mode;
    QString m_rootAddress;
    QVariantMap m_options;
    QByteArray m_key;
    QString m_worldName;
    QTemporaryDir m_dir;
    std::vector<std::unique_ptr<World>> m_worlds;
};

} // namespace mmpi::test
