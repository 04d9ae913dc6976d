// The interface a transport plugin implements. The plugin's metadata JSON holds
// {"name": "...", "description": "..."} so the registry can list transports
// without loading them.
#pragma once

#include <mmpi/transport/transport.h>

#include <QtPlugin>

namespace mmpi {

class TransportFactory
{
public:
    virtual ~TransportFactory() = default;
    // A new transport, or nullptr if it cannot run here (e.g. no adapter).
    virtual Transport *create(QObject *parent = nullptr) = 0;
};

} // namespace mmpi

#define MMPI_TRANSPORT_FACTORY_IID "org.mmpi.TransportFactory/1.0"
Q_DECLARE_INTERFACE(mmpi::TransportFactory, MMPI_TRANSPORT_FACTORY_IID)
