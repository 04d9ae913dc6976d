#include "bttransportfactory.h"

#include "bttransport.h"

namespace mmpi {

Transport *BtTransportFactory::create(QObject *parent)
{
    return new BtTransport(parent);
}

} // namespace mmpi
