// LaunchEnvironment: the contract between mmpirun and the world layer — the
// MMPI_* variables every node gets — together with the fresh world key and the
// root address behind them (docs/mmpirun.md, "Environment").
#pragma once

#include "launchoptions.h"

#include <mmpi/core/result.h>

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <memory>

QT_BEGIN_NAMESPACE
class QTcpServer;
QT_END_NAMESPACE

namespace mmpi::tools {

class LaunchEnvironment
{
public:
    // Makes the key and the root address; for tcp it finds a free port on
    // 127.0.0.1 and holds it until releaseRootPort(). Fails only if no port can be had.
    static Result<LaunchEnvironment> create(const LaunchOptions &options);

    LaunchEnvironment(LaunchEnvironment &&) noexcept;
    LaunchEnvironment &operator=(LaunchEnvironment &&) noexcept;
    ~LaunchEnvironment();

    // The inherited environment plus the whole MMPI_* contract for `rank`.
    // `withFaults` false: without the sim transport's scripted faults.
    QProcessEnvironment forRank(int rank, bool withFaults = true) const;
    // forRank() for a node that replaces a failed one: MMPI_REJOIN=1, and
    // no scripted faults (they would strike it again).
    QProcessEnvironment forReplacement(int rank) const;
    QString rootAddress() const { return m_rootAddress; }

    // Frees the port held for rank 0; call it just before starting the nodes
    // so that nothing else is likely to take the port in between.
    void releaseRootPort();

private:
    LaunchEnvironment() = default;

    QProcessEnvironment m_common;
    // Given to every node as MMPI_TRANSPORT_OPTIONS, with its rank; empty: none.
    QVariantMap m_transportOptions;
    QString m_rootAddress;
    // By rank, with --rank-address; given to each node as MMPI_LISTEN_ADDRESS.
    QStringList m_listenAddresses;
    std::unique_ptr<QTcpServer> m_portHolder;
};

} // namespace mmpi::tools
