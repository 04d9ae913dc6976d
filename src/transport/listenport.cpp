#include <mmpi/transport/listenport.h>

#include <QFile>
#include <QRandomGenerator>

namespace mmpi {

namespace {

// Tries at random ports below the ephemeral range before giving up on it.
constexpr int Attempts = 32;
// The lowest port tried: below it lie the ports services are known by.
constexpr int LowestPort = 10000;

// The first port of the ephemeral range, or 0 if the system does not say.
int ephemeralLow()
{
    QFile range(QStringLiteral("/proc/sys/net/ipv4/ip_local_port_range"));
    if (!range.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> bounds = range.readAll().simplified().split(' ');
    bool ok = false;
    const int low = bounds.value(0).toInt(&ok);
    return ok ? low : 0;
}

} // namespace

std::unique_ptr<QTcpServer> listenForLater(const QHostAddress &host)
{
    auto server = std::make_unique<QTcpServer>();
    const int low = ephemeralLow();
    for (int attempt = 0; low > LowestPort + 1 && attempt < Attempts; ++attempt) {
        const auto port = quint16(QRandomGenerator::global()->bounded(LowestPort, low));
        if (server->listen(host, port))
            return server;
    }
    server->listen(host, 0);
    return server;
}

} // namespace mmpi
