// WorldConfig: everything a node needs to join a world, for both ways in —
// launched by mmpirun (rank, size and root address given) or discovered (the
// root finds advertising nodes and assigns ranks). fromEnvironment() reads the
// contract that mmpirun sets (docs/guide/mmpirun.md).
#pragma once

#include <mmpi/core/result.h>

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <chrono>

namespace mmpi {

struct WorldConfig
{
    Q_GADGET
public:
    enum class Mode { Launched, Discovered };

    // The steps of a discovered world's search (also World::DiscoveryStep),
    // tried in the order of `discoverySteps` (docs/guide/transports.md,
    // "Join codes"). Declared here, where the list of them is, and a Q_ENUM
    // of this gadget, so that it has its names in the meta-object system.
    // New steps go at the end: the numbers are the enum's in QML and logs.
    enum class DiscoveryStep {
        DnsSd,    // DNS-SD: `_mmpi._tcp` over multicast DNS (tcp: the built-in responder)
        Beacon,   // the transport's own discovery (tcp: the broadcast beacon)
        JoinCode, // adverts sent straight to the root's addresses in a join code
        Address,  // adverts sent straight to addresses a person typed (rootAddresses)
    };
    Q_ENUM(DiscoveryStep)

    // The most ranks a world can have (rank tables bigger than this are refused).
    static constexpr int MaxSize = 4096;

    Mode mode = Mode::Launched;
    QString transport = QStringLiteral("local");
    QVariantMap transportOptions;
    QString worldName = QStringLiteral("mmpi");
    // Shared secret proven by challenge-response; it never travels.
    QByteArray worldKey;

    // Launched: this node's rank and the world size. Discovered: `size` is the
    // expected size, `rank` is 0 on the root and NoRank (-1) on the others,
    // which learn their rank from the root's rank table.
    int rank = 0;
    int size = 1;
    // Discovered only: the root forms with at least this many nodes (itself
    // included) if the expected size is not reached by the deadline; 0 means
    // `size` (all of them).
    int minimumSize = 0;
    // Launched: where rank 0 listens; other ranks connect there. With
    // rejoin: the member to join through (the root's address, or for a
    // replacement of rank 0 any survivor's).
    QString rootAddress;
    // Launched: this node replaces the lost member of that rank in a world
    // that is already formed (REBUILD, docs/guide/fault-tolerance.md#rebuild). It
    // joins through the member at rootAddress, which must be alive and
    // answers with the rank table; each member admits it once it has given
    // the old node up, so it is retried until then, within formationTimeout.
    // A replacement of rank 0 listens at listenAddress, not at rootAddress.
    bool rejoin = false;
    // With rejoin: further members to join through, tried in turn after
    // rootAddress's when a member cannot be reached or is lost before it
    // sent the rank table (the contact may fail too while the new node comes).
    QStringList rejoinContacts;
    // Where this node listens for mesh links (empty: the transport chooses).
    QString listenAddress;
    // Discovered only: a join code (mmpi::JoinCode, as its text), the same on
    // the root, which shows it, and on the nodes, where a person typed it.
    // Without a worldKey the world key is the code's (JoinCode::worldKey).
    // A node that no root has contacted beaconTimeout after it began to
    // beacon sends its adverts straight to the root's addresses in the code
    // (the fallback for networks without broadcast: World::discoveryStepGaveUp).
    QString joinCode;
    // Discovered nodes only (the root listens, as for join codes): the
    // root's addresses as a person typed them (mmpi::RootAddress), "host"
    // or "host:port", the host an IPv4 address or a host name, the port the
    // root's beacon port (by default this node's: RootAddress::beaconPort).
    // The Address step sends this node's adverts straight there. Unlike a
    // join code an address carries no key: a closed world needs worldKey
    // here too. validate() refuses a malformed entry (BadAddress).
    QStringList rootAddresses;
    // Discovered only: the steps of the search, in order. Each one starts
    // when the one before gave up (World::discoveryStepGaveUp) and goes on
    // beside the later ones, so a late node still counts. A step the
    // transport does not offer is passed over (local and sim: no DNS-SD),
    // as is JoinCode without a joinCode and, on a node, Address without
    // rootAddresses. No step twice; JoinCode and Address, which wait for a
    // person, only at the end (in either order), where they run together.
    QList<DiscoveryStep> discoverySteps{DiscoveryStep::DnsSd, DiscoveryStep::Beacon, DiscoveryStep::JoinCode,
                                        DiscoveryStep::Address};
    // Whether `step` waits for a person's input (a code, an address) and
    // never gives up by itself.
    static bool waitsForPerson(DiscoveryStep step)
    {
        return step == DiscoveryStep::JoinCode || step == DiscoveryStep::Address;
    }

    // The root only (elsewhere it changes nothing): before a joining node
    // gets a rank, once its link is sealed, a person confirms it
    // (World::joinRequested, confirmJoin, rejectJoin) after comparing the
    // verification code both devices show (docs/design/protocol.md,
    // "Confirming joins"). Needs a world key or a join code (typed
    // rootAddresses carry no key): a world anyone can join has nothing a
    // confirmation would protect.
    bool confirmJoins = false;
    // How long one join request waits for its answer; then the joiner is
    // turned away (JoinNotConfirmed). A person has to find both devices,
    // read six digits on each and tap: a minute does that without keeping a
    // forgotten request, and the device waiting on it, open for long. A
    // request also ends with the formation (formationTimeout), so a world
    // that confirms joins gives formation time for the people too.
    std::chrono::milliseconds confirmTimeout{60000};

    // Overall limit for forming; past it formation fails, naming what is missing.
    std::chrono::milliseconds formationTimeout{30000};
    // Discovered root: stop waiting for more nodes after this once the minimum
    // size has joined (the mesh is then built within formationTimeout).
    std::chrono::milliseconds discoveryTimeout{10000};
    // Discovered: how long the beacon (broadcast adverts) alone is tried.
    // A node with a joinCode or rootAddresses then turns to them; a root
    // that has heard no advert by then reports why
    // (World::discoveryStepGaveUp) and goes on listening, for nodes with
    // the join code or its address among others.
    std::chrono::milliseconds beaconTimeout{3000};
    // Discovered: how long DNS-SD is tried before the next step. Nodes
    // announce themselves at once and again at doubling intervals, and the
    // root asks at 0, 250 and 750 ms (docs/guide/transports.md,
    // "DNS-SD"): two seconds hear a node that is there.
    std::chrono::milliseconds dnsSdTimeout{2000};
    // Per-link limit for the authentication exchange.
    std::chrono::milliseconds handshakeTimeout{5000};
    // How long close() waits, with nothing leaving this node, for every
    // peer's goodbye before closing anyway: while what was sent before it
    // still leaves (a slow radio), close() keeps waiting; what a peer that
    // reads nothing holds up is dropped, with a warning.
    std::chrono::milliseconds closeTimeout{5000};

    // Failure detection (docs/guide/fault-tolerance.md). A node sends a peer a
    // heartbeat when it has sent it nothing else for heartbeatInterval; a peer
    // heard from (any frame) not for half of heartbeatTimeout is suspect, for
    // all of it lost. The defaults suit phones, whose radios sleep between
    // packets (Bluetooth sniff mode, Wi-Fi power save): a silent second means
    // little there. heartbeatTimeout must be at least 3 × heartbeatInterval;
    // an interval of 0 turns heartbeats and detection off (debugging).
    std::chrono::milliseconds heartbeatInterval{1000};
    std::chrono::milliseconds heartbeatTimeout{10000};
    // Reconnection (docs/design/resume.md): how long an unreachable
    // peer is tried again before it is lost (0: never; lost at once), and
    // the bytes of frames sent to one peer kept until it acknowledges them,
    // to be replayed after a reconnection. A full buffer holds the sender.
    std::chrono::milliseconds reconnectGracePeriod{30000};
    qint64 replayBufferSize = 8LL * 1024 * 1024;

    // Messages larger than this travel as Fragment frames of this size, so a
    // big message never holds up small ones on the same link for long.
    // 0: the transport's choice (512 KiB on tcp and local, 64 KiB elsewhere), within
    // what the buffer limits below leave room for.
    int chunkSize = 0;
    static constexpr int DefaultChunkSize = 64 * 1024;
    // The chunk size used with a transport that prefers `preferred` (0: none).
    int effectiveChunkSize(int preferred) const;
    // Largest message (reassembled from fragments) accepted from a peer.
    qint64 maxMessageSize = 256LL * 1024 * 1024;
    // Received messages no receive has asked for yet are kept up to about
    // this many payload bytes; beyond it the node stops reading from the peers
    // that sent them (flow control slows those senders down) until receives
    // take them. A peer that a posted receive waits for is still read.
    qint64 maxUnexpectedBytes = 64LL * 1024 * 1024;
    bool isRoot() const { return rank == 0; }
    int effectiveMinimumSize() const { return minimumSize > 0 ? minimumSize : size; }

    // Checks ranges and required fields; the error names the bad field.
    Result<void> validate() const;
    // The part of validate() that judges discoverySteps.
    Result<void> validateDiscoverySteps() const;
    // The part of validate() that judges rootAddresses.
    Result<void> validateRootAddresses() const;

    // The launch environment set by mmpirun: MMPI_RANK, MMPI_SIZE,
    // MMPI_TRANSPORT, MMPI_ROOT_ADDRESS, MMPI_WORLD_KEY (hex), MMPI_WORLD_NAME,
    // MMPI_FORMATION_TIMEOUT_MS, MMPI_TRANSPORT_OPTIONS (a JSON object, into
    // transportOptions), MMPI_LISTEN_ADDRESS (this node's listenAddress),
    // MMPI_REJOIN=1 (rejoin), and, if set, MMPI_HEARTBEAT_INTERVAL_MS, MMPI_HEARTBEAT_TIMEOUT_MS,
    // MMPI_RECONNECT_GRACE_MS, MMPI_REPLAY_BUFFER_BYTES and MMPI_CHUNK_BYTES.
    // Errors name the missing or malformed variable.
    static Result<WorldConfig> fromEnvironment();
    // Whether this process was started by mmpirun (MMPI_RANK is set).
    static bool isLaunched();
};

} // namespace mmpi
