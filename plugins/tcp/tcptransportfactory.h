// TcpTransportFactory: the plugin entry point of the tcp transport, found by
// TransportRegistry through the metadata in tcp.json.
#pragma once

#include <mmpi/transport/transportfactory.h>

namespace mmpi {

class TcpTransportFactory : public QObject, public TransportFactory
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID MMPI_TRANSPORT_FACTORY_IID FILE "tcp.json")
    Q_INTERFACES(mmpi::TransportFactory)
public:
    Transport *create(QObject *parent = nullptr) override;
};

} // namespace mmpi
