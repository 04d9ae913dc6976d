#include "simtransportfactory.h"

#include "simtransport.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/transportregistry.h>

namespace mmpi {

Transport *SimTransportFactory::create(QObject *parent)
{
    // The registry only says "cannot run on this device" for a null
    // transport, so the reason is logged here.
    auto local = TransportRegistry::create(QStringLiteral("local"));
    if (!local) {
        qCWarning(lcTransport).noquote() << "the sim transport runs over the local transport, which is missing:"
                                         << local.error().toString();
        return nullptr;
    }
    return new SimTransport(*local, parent);
}

} // namespace mmpi
