// KernelRfcommOpener: connects with a kernel RFCOMM socket of its own (Linux,
// BlueZ): bound to the chosen local adapter, with the security level asked
// for, non-blocking with a deadline; the connected descriptor is handed to the
// QBluetoothSocket. Qt's own connect cannot pick the local adapter, and its
// D-Bus backend cannot be server and client of one UUID (docs/guide/bluetooth.md).
#pragma once

#include "btsocketopener.h"

#include <QSocketNotifier>
#include <QTimer>

namespace mmpi {

class KernelRfcommOpener : public BtSocketOpener
{
    Q_OBJECT
public:
    // `adapter` 0: let the kernel choose. `securityLevel`: BT_SECURITY_* (1 low,
    // 2 medium = encrypted, 3 high = authenticated key).
    KernelRfcommOpener(quint64 adapter, int securityLevel, int timeoutMs, QObject *parent = nullptr);
    ~KernelRfcommOpener() override;

    void start(QBluetoothSocket *socket, const BtEndpoint &peer) override;
    void cancel() override;

private:
    void handleWritable();
    void handleTimeout();
    void fail(int error, const QString &what);
    void release();

    quint64 m_adapter;
    int m_securityLevel;
    int m_timeoutMs;
    int m_fd = -1;
    int m_generation = 0; // a queued report of a cancelled attempt is dropped
    QBluetoothSocket *m_socket = nullptr;
    QSocketNotifier *m_notifier = nullptr;
    QTimer m_timer;
};

} // namespace mmpi
