#include "worldharness.h"

#include "freeport.h"

#include <mmpi/transport/listenport.h>
#include <mmpi/wire/itemcodec.h>

#include <QDeadlineTimer>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <QUdpSocket>
#include <QUuid>

#include <sys/socket.h>

namespace mmpi::test {

WorldHarness::WorldHarness(const QString &transport, WorldConfig::Mode mode)
    : m_transport(transport), m_mode(mode)
{
    const QString tag = QUuid::createUuid().toString(QUuid::Id128).left(12);
    m_worldName = QStringLiteral("test-") + tag;
    m_key = QUuid::createUuid().toRfc4122();
    if (transport == QLatin1String("tcp")) {
        m_rootAddress = QStringLiteral("tcp://127.0.0.1:%1").arg(freeTcpPort());
        m_options = {{QStringLiteral("beaconPort"), freeUdpPort()},
                     {QStringLiteral("beaconTargets"), QStringList{QStringLiteral("127.0.0.1")}},
                     {QStringLiteral("beaconInterval"), 100}};
    } else {
        // local and sim both name a local server, under their own scheme.
        m_rootAddress = transport + QStringLiteral("://mmpi-test-") + tag;
        m_options = {{QStringLiteral("discoveryDir"), m_dir.path()},
                     {QStringLiteral("discoveryInterval"), 50}};
    }
}

WorldConfig WorldHarness::config(int index, int size) const
{
    WorldConfig c;
    c.mode = m_mode;
    c.transport = m_transport;
    c.transportOptions = m_options;
    c.worldName = m_worldName;
    c.worldKey = m_key;
    c.size = size;
    c.formationTimeout = std::chrono::seconds(20);
    c.discoveryTimeout = std::chrono::seconds(20);
    if (m_mode == WorldConfig::Mode::Launched) {
        c.rank = index;
        c.rootAddress = m_rootAddress;
    } else {
        c.rank = index == 0 ? 0 : NoRank;
    }
    return c;
}

void WorldHarness::addTransportOptions(const QVariantMap &options)
{
    for (auto it = options.begin(); it != options.end(); ++it)
        m_options.insert(it.key(), it.value());
}

World *WorldHarness::start(const WorldConfig &config, std::shared_ptr<MessageSink> sink)
{
    m_worlds.push_back(std::make_unique<World>());
    World *world = m_worlds.back().get();
    if (sink)
        world->setMessageSink(std::move(sink));
    world->form(config);
    return world;
}

void WorldHarness::destroy(World *world)
{
    std::erase_if(m_worlds, [world](const auto &w) { return w.get() == world; });
}

bool WorldHarness::allToAllWorks(const std::vector<World *> &worlds, QString *problem)
{
    std::vector<std::unique_ptr<QSignalSpy>> spies;
    for (World *w : worlds)
        spies.push_back(std::make_unique<QSignalSpy>(w, &World::frameReceived));
    const int n = int(worlds.size());
    for (World *w : worlds) {
        for (int dest = 0; dest < n; ++dest) {
            const QList<qint32> items{w->rank(), dest, 42};
            Frame f = makeFrame(FrameKind::Data, ItemType::Int, 3, encodeItems<qint32>(items));
            f.header.tag = 7;
            if (auto sent = w->sendFrame(dest, f); !sent) {
                *problem = sent.error().toString();
                return false;
            }
        }
    }
    QDeadlineTimer deadline(20000);
    for (int i = 0; i < n; ++i) {
        while (spies[i]->size() < n && !deadline.hasExpired())
            QTest::qWait(10);
        if (spies[i]->size() != n) {
            *problem = QStringLiteral("rank %1 got %2 of %3 frames").arg(worlds[i]->rank()).arg(spies[i]->size()).arg(n);
            return false;
        }
        QSet<int> sources;
        for (const auto &args : std::as_const(*spies[i])) {
            const Frame f = args.at(0).value<Frame>();
            const auto items = decodeItems<qint32>(f.header.itemType, f.header.count, f.payload);
            if (!items || items->value(0) != f.header.source || items->value(1) != worlds[i]->rank()
                || f.header.destination != worlds[i]->rank() || f.header.tag != 7) {
                *problem = QStringLiteral("rank %1 got a wrong frame from %2").arg(worlds[i]->rank()).arg(f.header.source);
                return false;
            }
            sources.insert(f.header.source);
        }
        if (sources.size() != n) {
            *problem = QStringLiteral("rank %1 got duplicates").arg(worlds[i]->rank());
            return false;
        }
    }
    return true;
}

quint16 WorldHarness::freeTcpPort()
{
    return listenForLater(QHostAddress::LocalHost)->serverPort();
}

quint16 WorldHarness::freeUdpPort()
{
    return freeBeaconPort();
}

int WorldHarness::breakTcpLinks()
{
    int broken = 0;
    for (int fd = 3; fd < 1024; ++fd) {
        int type = 0;
        socklen_t length = sizeof type;
        if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM)
            continue;
        sockaddr_storage peer{};
        socklen_t peerLength = sizeof peer;
        if (::getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peerLength) != 0 || peer.ss_family != AF_INET)
            continue;
        if (::shutdown(fd, SHUT_RDWR) == 0)
            ++broken;
    }
    return broken;
}

} // namespace mmpi::test
