#include "kernelrfcommopener.h"

#include <mmpi/core/logging.h>

#include <QBluetoothSocket>

#include <cerrno>
#include <cstring>
#include <utility>

#ifdef Q_OS_LINUX
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

namespace mmpi {

namespace {

#ifdef Q_OS_LINUX
// The kernel's ABI (include/net/bluetooth/{bluetooth,rfcomm}.h); BlueZ's
// development headers are not needed for these few constants.
constexpr int BtProtoRfcomm = 3;
constexpr int SolBluetooth = 274;
constexpr int BtSecurity = 4;

struct RfcommSockAddr
{
    sa_family_t family;
    quint8 device[6]; // least significant byte first
    quint8 channel;
};

struct BtSecurityOption
{
    quint8 level;
    quint8 keySize;
};

RfcommSockAddr sockAddr(quint64 device, quint8 channel)
{
    RfcommSockAddr addr{};
    addr.family = AF_BLUETOOTH;
    for (int i = 0; i < 6; ++i)
        addr.device[i] = quint8(device >> (8 * i));
    addr.channel = channel;
    return addr;
}
#endif

} // namespace

KernelRfcommOpener::KernelRfcommOpener(quint64 adapter, int securityLevel, int timeoutMs, QObject *parent)
    : BtSocketOpener(parent), m_adapter(adapter), m_securityLevel(securityLevel), m_timeoutMs(timeoutMs),
      m_timer(this)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &KernelRfcommOpener::handleTimeout);
}

KernelRfcommOpener::~KernelRfcommOpener()
{
    release();
}

void KernelRfcommOpener::start(QBluetoothSocket *socket, const BtEndpoint &peer)
{
    release();
    ++m_generation;
    m_socket = socket;
#ifdef Q_OS_LINUX
    m_fd = ::socket(AF_BLUETOOTH, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, BtProtoRfcomm);
    if (m_fd < 0)
        return fail(errno, QStringLiteral("cannot create an RFCOMM socket"));
    if (m_adapter != 0) {
        const RfcommSockAddr local = sockAddr(m_adapter, 0);
        if (::bind(m_fd, reinterpret_cast<const sockaddr *>(&local), sizeof local) < 0)
            return fail(errno, QStringLiteral("cannot use adapter %1").arg(formatBtDevice(m_adapter)));
    }
    const BtSecurityOption security{quint8(m_securityLevel), 0};
    if (::setsockopt(m_fd, SolBluetooth, BtSecurity, &security, sizeof security) < 0)
        qCDebug(lcTransport) << "bluetooth: cannot set the security level:" << std::strerror(errno);
    const RfcommSockAddr remote = sockAddr(peer.device, peer.channel);
    if (::connect(m_fd, reinterpret_cast<const sockaddr *>(&remote), sizeof remote) < 0 && errno != EINPROGRESS)
        return fail(errno, QStringLiteral("connect"));
    m_notifier = new QSocketNotifier(m_fd, QSocketNotifier::Write, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &KernelRfcommOpener::handleWritable);
    m_timer.start(m_timeoutMs);
#else
    Q_UNUSED(peer);
    fail(EAFNOSUPPORT, QStringLiteral("kernel RFCOMM sockets exist only on Linux"));
#endif
}

void KernelRfcommOpener::cancel()
{
    ++m_generation;
    release();
}

void KernelRfcommOpener::handleWritable()
{
#ifdef Q_OS_LINUX
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(m_fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0)
        error = errno;
    if (error != 0)
        return fail(error, QStringLiteral("connect"));
    m_timer.stop();
    delete m_notifier;
    m_notifier = nullptr;
    const int fd = std::exchange(m_fd, -1);
    // Qt's socket wants a blocking-mode descriptor; it sets its own flags.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (!m_socket->setSocketDescriptor(fd, QBluetoothServiceInfo::RfcommProtocol,
                                       QBluetoothSocket::SocketState::ConnectedState)) {
        ::close(fd);
        m_socket = nullptr;
        Q_EMIT failed(BtConnectPolicy::Failure::Fatal, QStringLiteral("Qt did not take the connected socket"));
        return;
    }
    m_socket = nullptr;
    Q_EMIT opened();
#endif
}

void KernelRfcommOpener::handleTimeout()
{
    fail(ETIMEDOUT, QStringLiteral("no answer within %1 ms").arg(m_timeoutMs));
}

void KernelRfcommOpener::fail(int error, const QString &what)
{
    release();
    const QString message = QStringLiteral("%1: %2").arg(what, QString::fromLocal8Bit(std::strerror(error)));
    // Reported on the next turn: start() never reports from inside itself.
    QMetaObject::invokeMethod(this, [this, error, message, generation = m_generation] {
        if (generation == m_generation)
            Q_EMIT failed(BtConnectPolicy::classifyErrno(error), message);
    }, Qt::QueuedConnection);
}

void KernelRfcommOpener::release()
{
    m_timer.stop();
    delete m_notifier;
    m_notifier = nullptr;
#ifdef Q_OS_LINUX
    if (m_fd >= 0)
        ::close(m_fd);
#endif
    m_fd = -1;
    m_socket = nullptr;
}

} // namespace mmpi
