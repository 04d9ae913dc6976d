#include <mmpi/transport/transport.h>

#include <mmpi/transport/optionreader.h>

namespace mmpi {

namespace {

Error noDiscovery(const QString &transport)
{
    return Error(ErrorCode::DiscoveryFailed,
                 QStringLiteral("transport %1 does not support discovery").arg(transport));
}

} // namespace

Transport::Transport(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<mmpi::PeerAdvert>();
    qRegisterMetaType<mmpi::Error>();
}

Transport::~Transport() = default;

Result<void> Transport::configure(const QVariantMap &options)
{
    // A transport without options accepts only the empty map.
    return OptionReader(name(), options).finish();
}

bool Transport::supportsDiscovery() const
{
    return false;
}

Result<void> Transport::advertise(const PeerAdvert &)
{
    return noDiscovery(name());
}

void Transport::stopAdvertising()
{
}

Result<void> Transport::startDiscovery(const QString &)
{
    return noDiscovery(name());
}

void Transport::stopDiscovery()
{
}

} // namespace mmpi
