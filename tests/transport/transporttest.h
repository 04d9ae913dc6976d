// Helpers shared by the transport tests: transports made through the registry
// (so the real plugins are loaded), raw client sockets that write whatever a
// test wants, and test frames. Everything stays on loopback.
#pragma once

#include <mmpi/transport/transportregistry.h>
#include <mmpi/wire/frame.h>

#include <QLocalSocket>
#include <QPointer>
#include <QTcpSocket>
#include <QTest>
#include <QUrl>
#include <QtEndian>

#include <memory>

namespace mmpi::test {

// Bound for every wait: generous, since two cores are shared with other jobs.
constexpr int Timeout = 10000;

// The reason a Result failed, for QVERIFY2 (which evaluates its message even
// when the check passes).
template<typename R>
QByteArray why(const R &result)
{
    return result ? QByteArray() : result.error().toString().toUtf8();
}

// A configured transport, or null (with the reason logged).
inline std::unique_ptr<Transport> makeTransport(const QString &name, const QVariantMap &options = {})
{
    auto created = TransportRegistry::create(name);
    if (!created) {
        qWarning().noquote() << created.error().toString();
        return nullptr;
    }
    std::unique_ptr<Transport> transport(*created);
    if (auto configured = transport->configure(options); !configured) {
        qWarning().noquote() << configured.error().toString();
        return nullptr;
    }
    return transport;
}

// A listening transport, a connecting one, and the link at each end.
struct LinkPair
{
    std::unique_ptr<Transport> server;
    std::unique_ptr<Transport> client;
    QString address;
    QPointer<Link> accepted;
    QPointer<Link> connecting;
};

// A plain socket connected to a listen address of either transport, for
// writing bytes no Link would write. Null if it cannot connect.
inline std::unique_ptr<QIODevice> rawConnect(const QString &address)
{
    const QUrl url(address);
    if (url.scheme() == QLatin1String("tcp")) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(url.host(), quint16(url.port()));
        return socket->waitForConnected(Timeout) ? std::move(socket) : nullptr;
    }
    auto socket = std::make_unique<QLocalSocket>();
    socket->connectToServer(address.mid(QStringLiteral("local://").size()));
    return socket->waitForConnected(Timeout) ? std::move(socket) : nullptr;
}

inline bool isConnected(QIODevice *device)
{
    if (auto *tcp = qobject_cast<QAbstractSocket *>(device))
        return tcp->state() == QAbstractSocket::ConnectedState;
    return qobject_cast<QLocalSocket *>(device)->state() == QLocalSocket::ConnectedState;
}

inline void disconnectRaw(QIODevice *device)
{
    if (auto *tcp = qobject_cast<QAbstractSocket *>(device))
        tcp->disconnectFromHost();
    else
        qobject_cast<QLocalSocket *>(device)->disconnectFromServer();
}

// A Data frame of `count` ints whose values and sequence number identify it.
inline Frame numberedFrame(quint64 sequence, int count = 4)
{
    QByteArray payload(count * 4, Qt::Uninitialized);
    for (int i = 0; i < count; ++i)
        qToBigEndian<qint32>(qint32(sequence * 1000 + i), payload.data() + 4 * i);
    Frame frame = makeFrame(FrameKind::Data, ItemType::Int, quint32(count), payload);
    frame.header.sequence = sequence;
    frame.header.tag = 7;
    frame.header.source = 1;
    frame.header.destination = 0;
    return frame;
}

} // namespace mmpi::test
