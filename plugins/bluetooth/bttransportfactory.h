// BtTransportFactory: the plugin entry point of the bluetooth transport,
// found by TransportRegistry through the metadata in bluetooth.json.
#pragma once

#include <mmpi/transport/transportfactory.h>

namespace mmpi {

class BtTransportFactory : public QObject, public TransportFactory
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID MMPI_TRANSPORT_FACTORY_IID FILE "bluetooth.json")
    Q_INTERFACES(mmpi::TransportFactory)
public:
    Transport *create(QObject *parent = nullptr) override;
};

} // namespace mmpi
