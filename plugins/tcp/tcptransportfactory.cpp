#include "tcptransportfactory.h"

#include "tcptransport.h"

namespace mmpi {

Transport *TcpTransportFactory::create(QObject *parent)
{
    return new TcpTransport(parent);
}

} // namespace mmpi
