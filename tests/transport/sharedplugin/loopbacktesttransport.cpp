#include "loopbacktesttransport.h"

namespace mmpi {

Result<QString> LoopbackTestTransport::listen(const QString &address)
{
    return Error(ErrorCode::ListenFailed, QStringLiteral("shared-test transport cannot listen at '%1'").arg(address));
}

Result<Link *> LoopbackTestTransport::connectTo(const QString &address)
{
    return Error(ErrorCode::BadAddress, QStringLiteral("shared-test transport cannot reach '%1'").arg(address));
}

} // namespace mmpi
