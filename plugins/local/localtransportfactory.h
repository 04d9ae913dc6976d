// LocalTransportFactory: the plugin entry point of the local transport, found
// by TransportRegistry through the metadata in local.json.
#pragma once

#include <mmpi/transport/transportfactory.h>

namespace mmpi {

class LocalTransportFactory : public QObject, public TransportFactory
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID MMPI_TRANSPORT_FACTORY_IID FILE "local.json")
    Q_INTERFACES(mmpi::TransportFactory)
public:
    Transport *create(QObject *parent = nullptr) override;
};

} // namespace mmpi
