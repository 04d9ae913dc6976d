#include "tcpbeacon.h"

#include "tcpaddress.h"

#include <mmpi/core/logging.h>

#include <QNetworkDatagram>
#include <QNetworkInterface>
#include <QPointer>
#include <QStringDecoder>
#include <QUdpSocket>
#include <QtEndian>

namespace mmpi {

namespace {

constexpr int MagicSize = 4;
constexpr int FixedSize = MagicSize + 1 + 2; // magic, version, port
constexpr int MaxStringSize = 255;           // one length byte

Error invalid(const QString &reason)
{
    return Error(ErrorCode::DiscoveryFailed, reason);
}

Result<void> appendString(QByteArray &out, const QString &value, const QString &field)
{
    const QByteArray bytes = value.toUtf8();
    if (bytes.isEmpty() || bytes.size() > MaxStringSize)
        return invalid(QStringLiteral("the %1 of a beacon must be 1 to %2 bytes of UTF-8, not %3")
                           .arg(field).arg(MaxStringSize).arg(bytes.size()));
    out.append(char(bytes.size()));
    out.append(bytes);
    return success();
}

// One length-prefixed UTF-8 string at `pos`; false if it is truncated or not
// valid UTF-8.
bool readString(QByteArrayView datagram, qsizetype &pos, QString &out)
{
    if (pos >= datagram.size())
        return false;
    const qsizetype length = quint8(datagram[pos]);
    if (datagram.size() - pos - 1 < length)
        return false;
    // Stateless: a sequence cut off at the end is an error, not held over.
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    out = decoder.decode(datagram.sliced(pos + 1, length));
    if (decoder.hasError())
        return false;
    pos += 1 + length;
    return true;
}

Result<void> checkFields(const TcpBeacon::Advert &advert)
{
    if (advert.port == 0)
        return invalid(QStringLiteral("listen port 0"));
    if (advert.worldName.isEmpty() || advert.nodeId.isEmpty())
        return invalid(QStringLiteral("empty world name or node id"));
    if (QHostAddress(advert.host).isNull() && !isAnyHost(advert.host))
        return invalid(QStringLiteral("listen host '%1' is not an IP address").arg(advert.host));
    return success();
}

} // namespace

Result<QByteArray> TcpBeacon::encode(const Advert &advert)
{
    if (auto ok = checkFields(advert); !ok)
        return ok.error();
    QByteArray out(Magic, MagicSize);
    out.append(char(Version));
    char port[2];
    qToBigEndian<quint16>(advert.port, port);
    out.append(port, 2);
    for (const auto &[value, field] : {std::pair{advert.worldName, QStringLiteral("world name")},
                                       std::pair{advert.nodeId, QStringLiteral("node id")},
                                       std::pair{advert.host, QStringLiteral("listen host")}}) {
        if (auto ok = appendString(out, value, field); !ok)
            return ok.error();
    }
    if (out.size() > MaxDatagramSize)
        return invalid(QStringLiteral("an advert of %1 bytes exceeds the beacon limit of %2")
                           .arg(out.size()).arg(MaxDatagramSize));
    return out;
}

Result<TcpBeacon::Advert> TcpBeacon::decode(QByteArrayView datagram)
{
    if (datagram.size() > MaxDatagramSize)
        return invalid(QStringLiteral("%1 bytes, more than %2").arg(datagram.size()).arg(MaxDatagramSize));
    if (datagram.size() < FixedSize || datagram.first(MagicSize) != QByteArrayView(Magic, MagicSize))
        return invalid(QStringLiteral("not an MMPI beacon"));
    if (quint8(datagram[MagicSize]) != Version)
        return invalid(QStringLiteral("beacon version %1 (expected %2)")
                           .arg(quint8(datagram[MagicSize])).arg(Version));
    Advert advert;
    advert.port = qFromBigEndian<quint16>(datagram.data() + MagicSize + 1);
    qsizetype pos = FixedSize;
    if (!readString(datagram, pos, advert.worldName) || !readString(datagram, pos, advert.nodeId)
        || !readString(datagram, pos, advert.host))
        return invalid(QStringLiteral("a string is truncated or not UTF-8"));
    if (pos != datagram.size())
        return invalid(QStringLiteral("%1 bytes after the last field").arg(datagram.size() - pos));
    if (auto ok = checkFields(advert); !ok)
        return ok.error();
    return advert;
}

QList<QHostAddress> TcpBeacon::defaultTargets()
{
    QList<QHostAddress> targets;
    const auto wanted = QNetworkInterface::IsUp | QNetworkInterface::CanBroadcast;
    for (const QNetworkInterface &interface : QNetworkInterface::allInterfaces()) {
        if ((interface.flags() & wanted) != wanted)
            continue;
        for (const QNetworkAddressEntry &entry : interface.addressEntries()) {
            const QHostAddress broadcast = entry.broadcast();
            if (entry.ip().protocol() == QAbstractSocket::IPv4Protocol && !broadcast.isNull()
                && !targets.contains(broadcast))
                targets << broadcast;
        }
    }
    targets << QHostAddress(QHostAddress::LocalHost);
    return targets;
}

TcpBeacon::TcpBeacon(QObject *parent)
    : QObject(parent), m_sendTimer(this)
{
    connect(&m_sendTimer, &QTimer::timeout, this, &TcpBeacon::sendAdvert);
}

TcpBeacon::~TcpBeacon() = default;

Result<void> TcpBeacon::startAdvertising(const Advert &advert, const QList<QHostAddress> &targets,
                                         quint16 port, int intervalMs)
{
    auto datagram = encode(advert);
    if (!datagram)
        return datagram.error();
    stopAdvertising();
    m_datagram = *datagram;
    m_targets = targets;
    m_targetPort = port;
    m_sender = new QUdpSocket(this);
    m_sendTimer.start(intervalMs);
    sendAdvert(); // a discoverer that is already listening need not wait an interval
    return success();
}

void TcpBeacon::stopAdvertising()
{
    m_sendTimer.stop();
    if (m_sender)
        m_sender->deleteLater();
    m_sender = nullptr;
}

Result<void> TcpBeacon::startListening(const QString &worldName, quint16 port)
{
    stopListening();
    auto *receiver = new QUdpSocket(this);
    // Shared, so that discoverers of several worlds on one machine can coexist.
    if (!receiver->bind(QHostAddress::AnyIPv4, port, QUdpSocket::ShareAddress | QUdpSocket::ReuseAddressHint)) {
        const QString reason = receiver->errorString();
        delete receiver;
        return Error(ErrorCode::DiscoveryFailed,
                     QStringLiteral("cannot listen for tcp beacons on UDP port %1: %2").arg(port).arg(reason));
    }
    m_worldName = worldName;
    m_receiver = receiver;
    connect(receiver, &QUdpSocket::readyRead, this, &TcpBeacon::readDatagrams);
    return success();
}

void TcpBeacon::stopListening()
{
    // deleteLater: this may run from a peerDiscovered slot inside readDatagrams().
    if (m_receiver) {
        m_receiver->disconnect(this);
        m_receiver->deleteLater();
    }
    m_receiver = nullptr;
}

void TcpBeacon::sendAdvert()
{
    for (const QHostAddress &target : std::as_const(m_targets)) {
        if (m_sender->writeDatagram(m_datagram, target, m_targetPort) < 0)
            qCDebug(lcTransport).noquote() << "beacon to" << target.toString() << "port" << m_targetPort
                                           << "not sent:" << m_sender->errorString();
    }
}

void TcpBeacon::readDatagrams()
{
    QPointer<TcpBeacon> self(this);
    while (self && m_receiver && m_receiver->hasPendingDatagrams()) {
        // One byte over the limit is enough to tell an oversized datagram.
        const QNetworkDatagram datagram = m_receiver->receiveDatagram(MaxDatagramSize + 1);
        if (!datagram.isValid())
            return;
        handleDatagram(datagram);
    }
}

void TcpBeacon::handleDatagram(const QNetworkDatagram &datagram)
{
    const QString sender = datagram.senderAddress().toString();
    auto advert = decode(datagram.data());
    if (!advert) {
        qCDebug(lcTransport).noquote() << "ignoring a datagram from" << sender << ":"
                                       << advert.error().message;
        return;
    }
    if (advert->worldName != m_worldName)
        return;
    // A node listening on every interface does not know which of its
    // addresses we can reach; the one its datagram came from will do.
    const QString address = isAnyHost(advert->host)
                                ? formatTcpAddress(datagram.senderAddress(), advert->port)
                                : formatTcpAddress(advert->host, advert->port);
    Q_EMIT peerDiscovered({advert->worldName, advert->nodeId, address});
}

} // namespace mmpi
