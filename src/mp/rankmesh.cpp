#include <mmpi/mp/rankmesh.h>

#include <mmpi/mp/logging.h>

#include <QTimer>

namespace mmpi::mp {

namespace {
Error badTable(const QString &why)
{
    return Error(ErrorCode::BadConfiguration, QStringLiteral("rank table: %1").arg(why));
}

Result<RankAddress> parseAddress(const QString &text)
{
    const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
    bool ok = false;
    const uint port = colon > 0 ? text.mid(colon + 1).toUInt(&ok) : 0;
    if (!ok || port == 0 || port > 65535)
        return badTable(QStringLiteral("'%1' is not host:port").arg(text));
    return RankAddress{text.left(colon), quint16(port)};
}

Result<qint32> intVariable(const char *name)
{
    bool ok = false;
    const int value = qEnvironmentVariable(name).toInt(&ok);
    if (!ok)
        return Error(ErrorCode::BadConfiguration, QStringLiteral("%1 is not set to an integer").arg(QLatin1String(name)));
    return qint32(value);
}
} // namespace

Result<RankMesh::Table> RankMesh::parseTable(const QString &text)
{
    Table table;
    const QStringList entries = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString &raw : entries) {
        const QString entry = raw.trimmed();
        const qsizetype eq = entry.indexOf(QLatin1Char('='));
        bool ok = false;
        const int rank = eq > 0 ? entry.left(eq).trimmed().toInt(&ok) : -1;
        if (!ok || rank < 0)
            return badTable(QStringLiteral("'%1' is not rank=host:port").arg(entry));
        if (table.contains(rank))
            return badTable(QStringLiteral("rank %1 is listed twice").arg(rank));
        auto address = parseAddress(entry.mid(eq + 1).trimmed());
        if (!address)
            return address.error();
        table.insert(rank, *address);
    }
    if (table.isEmpty())
        return badTable(QStringLiteral("no entries"));
    return table;
}

RankMesh::Table RankMesh::sequentialTable(const QString &host, quint16 basePort, qint32 size)
{
    Table table;
    for (qint32 rank = 0; rank < size; ++rank)
        table.insert(rank, {host, quint16(basePort + rank)});
    return table;
}

Result<RankMesh::EnvironmentConfig> RankMesh::configFromEnvironment()
{
    auto rank = intVariable("MMPI_RANK");
    if (!rank)
        return rank.error();
    EnvironmentConfig config;
    config.rank = *rank;
    if (qEnvironmentVariableIsSet("MMPI_MP_RANKS")) {
        auto table = parseTable(qEnvironmentVariable("MMPI_MP_RANKS"));
        if (!table)
            return table.error();
        config.table = *table;
    } else {
        auto base = intVariable("MMPI_MP_BASE_PORT");
        auto size = intVariable("MMPI_SIZE");
        if (!base)
            return Error(ErrorCode::BadConfiguration, QStringLiteral("set MMPI_MP_RANKS or MMPI_MP_BASE_PORT"));
        if (!size)
            return size.error();
        if (*base <= 0 || *base + *size > 65536)
            return badTable(QStringLiteral("MMPI_MP_BASE_PORT %1 with %2 ranks is out of the port range").arg(*base).arg(*size));
        config.table = sequentialTable(QStringLiteral("127.0.0.1"), quint16(*base), *size);
    }
    if (!config.table.contains(config.rank))
        return badTable(QStringLiteral("this node's rank %1 is not listed").arg(config.rank));
    return config;
}

RankMesh::RankMesh(ChannelGroup *group, Table table, QObject *parent)
    : QObject(parent), m_group(group), m_table(std::move(table)), m_deadline(new QTimer(this))
{
    m_deadline->setSingleShot(true);
    connect(m_deadline, &QTimer::timeout, this, [this] {
        QStringList missing;
        for (qint32 rank : missingRanks())
            missing.append(QString::number(rank));
        giveUp(Error(ErrorCode::FormationTimeout,
                     QStringLiteral("rank %1: ranks %2 not connected in time").arg(rank()).arg(missing.join(QStringLiteral(", ")))));
    });
    connect(m_group, &ChannelGroup::channelOpened, this, &RankMesh::onChannelOpened);
    connect(m_group, &ChannelGroup::channelFailed, this, &RankMesh::onChannelFailed);
}

Result<void> RankMesh::start(std::chrono::milliseconds timeout, std::chrono::milliseconds retryInterval)
{
    if (!m_table.contains(rank()))
        return badTable(QStringLiteral("this node's rank %1 is not listed").arg(rank()));
    m_retryInterval = retryInterval;
    if (!m_group->isListening()) {
        const RankAddress self = m_table.value(rank());
        QHostAddress address;
        if (!address.setAddress(self.host))
            address = QHostAddress::Any; // a host name: accept on every interface
        if (auto ok = m_group->listen(address, self.port); !ok)
            return ok;
    }
    m_deadline->start(timeout);
    for (auto it = m_table.cbegin(); it != m_table.cend() && it.key() < rank(); ++it)
        dial(it.key());
    QTimer::singleShot(0, this, &RankMesh::checkReady); // a world of one is ready at once
    return success();
}

QList<qint32> RankMesh::missingRanks() const
{
    QList<qint32> missing;
    for (auto it = m_table.cbegin(); it != m_table.cend(); ++it) {
        if (it.key() != rank() && !m_group->channel(it.key()))
            missing.append(it.key());
    }
    return missing;
}

void RankMesh::dial(qint32 target)
{
    if (m_done)
        return;
    const RankAddress address = m_table.value(target);
    qCDebug(lcMp) << "rank" << rank() << "dials rank" << target << "at" << address.host << address.port;
    m_dialing.insert(target, m_group->connectTo(address.host, address.port));
}

void RankMesh::onChannelOpened(Channel *channel)
{
    const qint32 expected = m_dialing.key(channel, -1);
    if (expected >= 0 && channel->farId() != expected) {
        giveUp(Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("the peer listed as rank %1 (%2) says it is %3")
                         .arg(expected).arg(channel->peerName()).arg(channel->farId())));
        return;
    }
    m_dialing.remove(expected);
    checkReady();
}

// A lower rank that does not listen yet refuses us: try again shortly.
void RankMesh::onChannelFailed(Channel *channel)
{
    const qint32 target = m_dialing.key(channel, -1);
    if (target < 0 || m_done)
        return;
    m_dialing.remove(target);
    channel->deleteLater();
    QTimer::singleShot(m_retryInterval, this, [this, target] { dial(target); });
}

void RankMesh::checkReady()
{
    if (m_done || !isReady())
        return;
    m_done = true;
    m_deadline->stop();
    emit ready();
}

void RankMesh::giveUp(Error error)
{
    if (m_done)
        return;
    m_done = true;
    m_deadline->stop();
    qCWarning(lcMp).noquote() << error.toString();
    emit failed(error);
}

} // namespace mmpi::mp
