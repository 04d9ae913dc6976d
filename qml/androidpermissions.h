// The Android runtime permissions a Bluetooth world needs (Android 12+:
// BLUETOOTH_SCAN, _CONNECT, _ADVERTISE; before: ACCESS_FINE_LOCATION for
// discovery), asked for before the World forms. Elsewhere nothing is needed.
#pragma once

#include <mmpi/core/result.h>

#include <QCoroTask>
#include <QStringList>

namespace mmpi {

class AndroidPermissions
{
public:
    // The permissions `transport` needs on this platform (empty but on
    // Android with the bluetooth transport).
    static QStringList neededFor(const QString &transport);
    // Asks the user for those not yet granted; an error names the refused ones.
    static QCoro::Task<Result<void>> request(const QStringList &permissions);
};

} // namespace mmpi
