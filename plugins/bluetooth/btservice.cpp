#include "btservice.h"

#include <QBluetoothAddress>
#include <QBluetoothDeviceInfo>

namespace mmpi {

namespace {
constexpr qsizetype MaxNameLength = 255;
}

QBluetoothServiceInfo btServiceInfo(const QString &worldName, const QString &nodeId, quint8 channel)
{
    QBluetoothServiceInfo info;
    info.setServiceName(BtServiceName);
    info.setServiceDescription(QStringLiteral("MMPI node of world %1").arg(worldName));
    info.setServiceProvider(QStringLiteral("MMPI for Qt"));
    info.setServiceUuid(btServiceUuid());
    QBluetoothServiceInfo::Sequence classIds;
    classIds << QVariant::fromValue(btServiceUuid());
    classIds << QVariant::fromValue(QBluetoothUuid(QBluetoothUuid::ServiceClassUuid::SerialPort));
    info.setAttribute(QBluetoothServiceInfo::ServiceClassIds, classIds);
    QBluetoothServiceInfo::Sequence browse;
    browse << QVariant::fromValue(QBluetoothUuid(QBluetoothUuid::ServiceClassUuid::PublicBrowseGroup));
    info.setAttribute(QBluetoothServiceInfo::BrowseGroupList, browse);
    QBluetoothServiceInfo::Sequence l2cap, rfcomm, protocols;
    l2cap << QVariant::fromValue(QBluetoothUuid(QBluetoothUuid::ProtocolUuid::L2cap));
    rfcomm << QVariant::fromValue(QBluetoothUuid(QBluetoothUuid::ProtocolUuid::Rfcomm))
           << QVariant::fromValue(quint8(channel));
    protocols << QVariant::fromValue(l2cap) << QVariant::fromValue(rfcomm);
    info.setAttribute(QBluetoothServiceInfo::ProtocolDescriptorList, protocols);
    info.setAttribute(BtWorldNameAttribute, worldName);
    info.setAttribute(BtNodeIdAttribute, nodeId);
    return info;
}

bool btRecordFromServiceInfo(const QBluetoothServiceInfo &info, BtServiceRecord *record)
{
    const bool ours = info.serviceUuid() == btServiceUuid() || info.serviceClassUuids().contains(btServiceUuid());
    const int channel = info.serverChannel();
    const QString world = info.attribute(BtWorldNameAttribute).toString();
    const QString node = info.attribute(BtNodeIdAttribute).toString();
    if (!ours || channel < 1 || channel > 30 || world.isEmpty() || node.isEmpty()
        || world.size() > MaxNameLength || node.size() > MaxNameLength)
        return false;
    *record = {info.device().address().toUInt64(), quint8(channel), world, node};
    return true;
}

} // namespace mmpi
