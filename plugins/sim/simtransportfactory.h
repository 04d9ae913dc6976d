// SimTransportFactory: the plugin entry point of the sim transport, found by
// TransportRegistry through the metadata in sim.json. It needs the local
// transport plugin, which carries the sim transport's bytes.
#pragma once

#include <mmpi/transport/transportfactory.h>

namespace mmpi {

class SimTransportFactory : public QObject, public TransportFactory
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID MMPI_TRANSPORT_FACTORY_IID FILE "sim.json")
    Q_INTERFACES(mmpi::TransportFactory)
public:
    Transport *create(QObject *parent = nullptr) override;
};

} // namespace mmpi
