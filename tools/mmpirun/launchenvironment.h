// LaunchEnvironment: the contract between mmpirun and the world layer — the
// MMPI_* variables every node gets — together with the fresh world key and the
// root address behind them (docs/guide/mmpirun.md, "Environment").
#pragma once

#include "launchoptions.h"

#include <mmpi/core/result.h>

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <memory>
#include <vector>

QT_BEGIN_NAMESPACE
class QTcpServer;
QT_END_NAMESPACE

namespace mmpi::tools {

class LaunchEnvironment
{
public:
    // Makes the key and the root address; for tcp it finds a free port on
    // 127.0.0.1 and holds it until releasePorts(). With --respawn every
    // rank gets a fixed listen address (a port held the same way on tcp), so
    // that a replacement of rank 0 knows where the survivors are. Fails only
    // if no port can be had.
    static Result<LaunchEnvironment> create(const LaunchOptions &options);

    LaunchEnvironment(LaunchEnvironment &&) noexcept;
    LaunchEnvironment &operator=(LaunchEnvironment &&) noexcept;
    ~LaunchEnvironment();

    // The inherited environment plus the whole MMPI_* contract for `rank`.
    // `withFaults` false: without the sim transport's scripted faults.
    QProcessEnvironment forRank(int rank, bool withFaults = true) const;
    // forRank() for a node that replaces a failed one: MMPI_REJOIN=1, and
    // no scripted faults (they would strike it again).
    // With --respawn the replacement listens at a new fixed address and
    // joins through the first of `contacts` (running ranks), trying the
    // others in turn (MMPI_REJOIN_CONTACTS).
    QProcessEnvironment forReplacement(int rank, const QList<int> &contacts);
    // Whether a replacement of rank 0 can find the survivors (--respawn).
    bool knowsEveryAddress() const;
    QString rootAddress() const { return m_rootAddress; }
    // The CPU each rank is bound to (planBinding() of --bind-to); empty:
    // the nodes are not bound.
    const QList<int> &cpus() const { return m_cpus; }

    // Frees the ports held for the ranks; call it just before starting the
    // nodes so that nothing else is likely to take a port in between.
    void releasePorts();

private:
    LaunchEnvironment() = default;
    // Listens on a free port of 127.0.0.1 until releasePorts().
    Result<quint16> holdPort();
    void moveToFreshAddress(int rank);

    QProcessEnvironment m_common;
    // Given to every node as MMPI_TRANSPORT_OPTIONS, with its rank; empty: none.
    QVariantMap m_transportOptions;
    QString m_rootAddress;
    // By rank, with --rank-address or --respawn; given to each node as
    // MMPI_LISTEN_ADDRESS.
    QStringList m_listenAddresses;
    std::vector<std::unique_ptr<QTcpServer>> m_portHolders;
    bool m_everyAddressFixed = false;
    QStringList m_rankHosts;   // --rank-address, by rank
    QList<int> m_replacements; // by rank: how many replaced it so far
    QList<int> m_cpus;         // by rank; empty: not bound
};

} // namespace mmpi::tools
