// LocalLink: a StreamLink over a QLocalSocket (a Unix-domain socket on Linux
// and Android), made either by connecting to a server name or from a socket a
// LocalTransport accepted.
#pragma once

#include <mmpi/transport/streamlink.h>

#include <QLocalSocket>

namespace mmpi {

class LocalLink : public StreamLink
{
    Q_OBJECT
public:
    // Starts connecting on the next event-loop turn: QLocalSocket reports a
    // missing server at once, before the caller could connect its slots.
    // `socketBuffer`: see StreamLink::setSocketBufferSize().
    static LocalLink *connectTo(const QString &serverName, DecoderLimits limits, int socketBuffer,
                                QObject *parent);
    // A link over a socket that is already connected (Connected at once).
    // A local peer has no address of its own, so the acceptor names it.
    static LocalLink *accept(QLocalSocket *socket, QString peerAddress, DecoderLimits limits,
                             int socketBuffer, QObject *parent);

    QString peerAddress() const override { return m_peerAddress; }

protected:
    void closeDevice() override;
    void flushDevice() override;
    qintptr nativeDescriptor() const override { return m_socket->socketDescriptor(); }
    KernelQueue kernelQueue() const override { return KernelQueue::Unix; }

private:
    LocalLink(QLocalSocket *socket, QString peerAddress, DecoderLimits limits, QObject *parent);
    void startConnecting(const QString &serverName);
    void handleSocketError(QLocalSocket::LocalSocketError error);

    QLocalSocket *m_socket;
    QString m_peerAddress;
};

} // namespace mmpi
