// A transport of one's own, built as a shared plugin the way an app's author
// would build one: tst_transportregistry checks that the registry finds it in
// MMPI_PLUGIN_PATH beside the standard transports linked into the test.
#pragma once

#include <mmpi/transport/transportfactory.h>

namespace mmpi {

// Listens nowhere and connects nowhere: only its name and its errors matter.
class LoopbackTestTransport : public Transport
{
    Q_OBJECT
public:
    using Transport::Transport;
    QString name() const override { return QStringLiteral("shared-test"); }
    Result<QString> listen(const QString &address) override;
    QString listenAddress() const override { return {}; }
    void stopListening() override {}
    Result<Link *> connectTo(const QString &address) override;
};

class LoopbackTestTransportFactory : public QObject, public TransportFactory
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID MMPI_TRANSPORT_FACTORY_IID FILE "sharedtest.json")
    Q_INTERFACES(mmpi::TransportFactory)
public:
    Transport *create(QObject *parent = nullptr) override { return new LoopbackTestTransport(parent); }
};

} // namespace mmpi
