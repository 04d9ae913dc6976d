#include "androidpermissions.h"

#include "qmllogging.h"

#ifdef Q_OS_ANDROID
#include <QCoroFuture>
#include <QtCore/private/qandroidextras_p.h>
#include <QtCore/qcoreapplication_platform.h>
#include <QCoreApplication>
#endif

namespace mmpi {

QStringList AndroidPermissions::neededFor(const QString &transport)
{
#ifdef Q_OS_ANDROID
    if (transport != QLatin1String("bluetooth"))
        return {};
    // Inquiry reveals location: Android asks for it on every version; the
    // three Bluetooth runtime permissions exist from API 31 (Android 12) on.
    QStringList permissions{QStringLiteral("android.permission.ACCESS_FINE_LOCATION")};
    if (QNativeInterface::QAndroidApplication::sdkVersion() >= 31) {
        permissions << QStringLiteral("android.permission.BLUETOOTH_SCAN")
                    << QStringLiteral("android.permission.BLUETOOTH_CONNECT")
                    << QStringLiteral("android.permission.BLUETOOTH_ADVERTISE");
    }
    return permissions;
#else
    Q_UNUSED(transport);
    return {};
#endif
}

QCoro::Task<Result<void>> AndroidPermissions::request(const QStringList &permissions)
{
#ifdef Q_OS_ANDROID
    QStringList refused;
    for (const QString &permission : permissions) {
        auto checked = QtAndroidPrivate::checkPermission(permission);
        const QtAndroidPrivate::PermissionResult current = co_await checked;
        if (current == QtAndroidPrivate::Authorized)
            continue;
        auto asked = QtAndroidPrivate::requestPermission(permission);
        const QtAndroidPrivate::PermissionResult answer = co_await asked;
        if (answer != QtAndroidPrivate::Authorized)
            refused << permission;
    }
    if (!refused.isEmpty()) {
        qCWarning(lcQml) << "Bluetooth permissions refused:" << refused;
        co_return Error(ErrorCode::BadConfiguration,
                        QStringLiteral("the world needs these Android permissions, which were refused: %1")
                            .arg(refused.join(QStringLiteral(", "))));
    }
    co_return success();
#else
    if (!permissions.isEmpty())
        qCDebug(lcQml) << "no runtime permissions on this platform; ignoring" << permissions;
    co_return success();
#endif
}

} // namespace mmpi
