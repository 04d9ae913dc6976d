// mmpi::mp::RankMesh: lets the nodes of an MMPI world appear to edu.rit.mp as
// channel group IDs equal to their ranks, the way PJ's cluster layer uses
// them. Given a rank -> host:port table, the group (whose ID is the rank)
// listens on its own entry and dials every lower rank, retrying until they
// listen; higher ranks dial it. PJ programs in the table just listen.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/channelgroup.h>

#include <QMap>
#include <QObject>
#include <QPointer>

#include <chrono>

class QTimer;

namespace mmpi::mp {

struct RankAddress
{
    QString host;
    quint16 port = 0;
    bool operator==(const RankAddress &) const = default;
};

class RankMesh : public QObject
{
    Q_OBJECT
public:
    using Table = QMap<qint32, RankAddress>;

    // "0=10.0.0.5:7000,1=10.0.0.6:7000" (spaces allowed). Errors: BadConfiguration.
    static Result<Table> parseTable(const QString &text);
    // Rank r at host:basePort+r for ranks 0..size-1 (a world on one machine).
    static Table sequentialTable(const QString &host, quint16 basePort, qint32 size);
    // This node's rank from MMPI_RANK (mmpirun sets it) and the table from
    // MMPI_MP_RANKS, or from MMPI_MP_BASE_PORT with MMPI_SIZE on 127.0.0.1.
    struct EnvironmentConfig
    {
        qint32 rank = 0;
        Table table;
    };
    static Result<EnvironmentConfig> configFromEnvironment();

    // The rank is group->id(); the group must outlive the mesh.
    RankMesh(ChannelGroup *group, Table table, QObject *parent = nullptr);

    ChannelGroup *group() const { return m_group; }
    qint32 rank() const { return m_group->id(); }
    const Table &table() const { return m_table; }

    // Listen (unless the group already does) and dial the lower ranks. Errors
    // now: BadConfiguration (own rank not in the table), ListenFailed. Later:
    // failed() with FormationTimeout if not every rank is connected in time.
    Result<void> start(std::chrono::milliseconds timeout = std::chrono::seconds(30),
                       std::chrono::milliseconds retryInterval = std::chrono::milliseconds(200));
    // The open channel to `rank`, or null.
    Channel *channelForRank(qint32 rank) const { return m_group->channel(rank); }
    bool isReady() const { return missingRanks().isEmpty(); }
    QList<qint32> missingRanks() const;

Q_SIGNALS:
    void ready();
    void failed(const mmpi::Error &error);

private:
    void dial(qint32 rank);
    void onChannelOpened(Channel *channel);
    void onChannelFailed(Channel *channel);
    void checkReady();
    void giveUp(Error error);

    ChannelGroup *m_group;
    Table m_table;
    std::chrono::milliseconds m_retryInterval{200};
    QTimer *m_deadline;
    QMap<qint32, QPointer<Channel>> m_dialing;
    bool m_done = false;
};

} // namespace mmpi::mp
