// The mmpiNode SDP service: its fixed UUID, the attributes that carry the
// world name and node id, and the record a discoverer reads back. Both sides
// of the SDP exchange use these, so the format lives in one place.
#pragma once

#include <QBluetoothServiceInfo>
#include <QBluetoothUuid>
#include <QString>

namespace mmpi {

// 4d4d5049 is "MMPI" in ASCII; the rest is random. Documented in docs/guide/bluetooth.md.
inline QBluetoothUuid btServiceUuid()
{
    return QBluetoothUuid(QStringLiteral("{4d4d5049-4e6f-6465-b7e1-6a8f3c2d9e15}"));
}

inline const QString BtServiceName = QStringLiteral("mmpiNode");
// Attribute ids in the service-specific range (0x0200 and up of our own class).
constexpr quint16 BtWorldNameAttribute = 0x0301;
constexpr quint16 BtNodeIdAttribute = 0x0302;

// One mmpiNode record as found by service discovery.
struct BtServiceRecord
{
    quint64 device = 0;
    quint8 channel = 0;
    QString worldName;
    QString nodeId;
    bool operator==(const BtServiceRecord &) const = default;
};

// The record to register for a node listening on `channel`.
QBluetoothServiceInfo btServiceInfo(const QString &worldName, const QString &nodeId, quint8 channel);
// Reads a discovered service back; false if it is not a usable mmpiNode record
// (other UUID, no RFCOMM channel, missing or oversized names).
bool btRecordFromServiceInfo(const QBluetoothServiceInfo &info, BtServiceRecord *record);

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::BtServiceRecord)
