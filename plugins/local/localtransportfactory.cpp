#include "localtransportfactory.h"

#include "localtransport.h"

namespace mmpi {

Transport *LocalTransportFactory::create(QObject *parent)
{
    return new LocalTransport(parent);
}

} // namespace mmpi
