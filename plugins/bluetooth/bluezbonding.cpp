#include "bluezbonding.h"

#include "btaddress.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusVariant>

namespace mmpi {

namespace {

constexpr auto Service = "org.bluez";
constexpr auto AdapterInterface = "org.bluez.Adapter1";
constexpr auto PropertiesInterface = "org.freedesktop.DBus.Properties";
// bluetoothd names its adapters /org/bluez/hci<index>; an index is a kernel
// HCI device number, and a machine has a handful at most.
constexpr int MaxAdapterIndex = 32;
// The calls run on the progress thread before any link exists; a bluetoothd
// that does not answer within this is treated as absent (D-Bus's own default
// would be 25 s).
constexpr int CallTimeoutMs = 2000;

QDBusMessage propertyCall(const QString &path, const QString &method, const QVariantList &arguments)
{
    QDBusMessage call = QDBusMessage::createMethodCall(QLatin1String(Service), path,
                                                       QLatin1String(PropertiesInterface), method);
    call.setArguments(arguments);
    return QDBusConnection::systemBus().call(call, QDBus::Block, CallTimeoutMs);
}

QVariant adapterProperty(const QString &path, const QString &name, QString *error = nullptr)
{
    const QDBusMessage reply = propertyCall(path, QStringLiteral("Get"), {QLatin1String(AdapterInterface), name});
    if (reply.type() != QDBusMessage::ReplyMessage || reply.arguments().isEmpty()) {
        if (error)
            *error = reply.errorMessage();
        return {};
    }
    return reply.arguments().constFirst().value<QDBusVariant>().variant();
}

QDBusMessage setPairable(const QString &path, bool on)
{
    return propertyCall(path, QStringLiteral("Set"),
                        {QLatin1String(AdapterInterface), QStringLiteral("Pairable"),
                         QVariant::fromValue(QDBusVariant(on))});
}

// The adapter's object path, or empty (`why` then says what was missing).
QString findAdapter(quint64 adapter, QString &why)
{
    if (!QDBusConnection::systemBus().isConnected()) {
        why = QStringLiteral("no D-Bus system bus");
        return {};
    }
    const QString wanted = formatBtDevice(adapter);
    for (int index = 0; index < MaxAdapterIndex; ++index) {
        const QString path = QStringLiteral("/org/bluez/hci%1").arg(index);
        const QVariant address = adapterProperty(path, QStringLiteral("Address"), &why);
        if (address.toString().compare(wanted, Qt::CaseInsensitive) == 0)
            return path;
    }
    why = QStringLiteral("bluetoothd exports no adapter %1 (%2)").arg(wanted, why);
    return {};
}

} // namespace

BluezBonding::BluezBonding(quint64 adapter)
{
    QString why;
    m_path = findAdapter(adapter, why);
    if (m_path.isEmpty()) {
        m_detail = why;
        return;
    }
    if (adapterProperty(m_path, QStringLiteral("Pairable")).toBool()) {
        m_outcome = Outcome::AlreadyBondable;
        m_detail = m_path;
        return;
    }
    const QDBusMessage reply = setPairable(m_path, true);
    if (reply.type() != QDBusMessage::ReplyMessage) {
        m_outcome = Outcome::Refused;
        m_detail = QStringLiteral("%1: %2").arg(m_path, reply.errorMessage());
        return;
    }
    m_outcome = Outcome::MadeBondable;
    m_detail = m_path;
}

BluezBonding::~BluezBonding()
{
    // Keys already stored stay: later links to those devices use them.
    if (m_outcome == Outcome::MadeBondable)
        setPairable(m_path, false);
}

} // namespace mmpi
