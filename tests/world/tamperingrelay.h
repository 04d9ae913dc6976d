// TamperingRelay: a TCP relay between a node that dials and the node it
// dials, for tests of sealed links. Bytes from the dialled node pass as they
// are; the dialler's stream is cut into frames (44-byte header, then its
// payload length) and, once armed, the next sealed record is tampered with
// the way asked: one bit flipped, sent twice, swapped with the record after
// it, or dropped. When either side's connection ends the other's is cut too.
#pragma once

#include <mmpi/wire/frame.h>

#include <QHostAddress>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtEndian>

#include <optional>

namespace mmpi::test {

class TamperingRelay
{
public:
    enum class Tamper { None, FlipBit, Replay, Reorder, Drop };

    explicit TamperingRelay(quint16 targetPort) : m_targetPort(targetPort)
    {
        m_server.listen(QHostAddress::LocalHost);
        QObject::connect(&m_server, &QTcpServer::newConnection, &m_server, [this] {
            while (QTcpSocket *in = m_server.nextPendingConnection())
                relay(in);
        });
    }
    QString address() const { return QStringLiteral("tcp://127.0.0.1:%1").arg(m_server.serverPort()); }
    // The next sealed record from the dialler is tampered with.
    void arm(Tamper tamper) { m_armed = tamper; }
    bool tampered() const { return m_tampered; }

private:
    void relay(QTcpSocket *in)
    {
        auto *out = new QTcpSocket(in);
        auto *buffer = new QByteArray;
        QObject::connect(in, &QObject::destroyed, [buffer] { delete buffer; });
        QObject::connect(out, &QTcpSocket::readyRead, in, [in, out] { in->write(out->readAll()); });
        QObject::connect(in, &QTcpSocket::readyRead, out, [this, in, out, buffer] {
            buffer->append(in->readAll());
            forwardFrames(*buffer, out);
        });
        QObject::connect(out, &QTcpSocket::connected, out, [this, in, out, buffer] {
            buffer->append(in->readAll());
            forwardFrames(*buffer, out);
        });
        QObject::connect(in, &QTcpSocket::disconnected, out, [out] { out->disconnectFromHost(); });
        QObject::connect(out, &QTcpSocket::disconnected, in, [in] {
            in->disconnectFromHost();
            in->deleteLater();
        });
        out->connectToHost(QHostAddress::LocalHost, m_targetPort);
    }

    void forwardFrames(QByteArray &buffer, QTcpSocket *out)
    {
        if (out->state() != QAbstractSocket::ConnectedState)
            return;
        while (buffer.size() >= FrameHeaderSize) {
            const qsizetype size = FrameHeaderSize + qFromBigEndian<quint32>(buffer.constData() + 40);
            if (buffer.size() < size)
                return;
            const QByteArray frame = buffer.left(size);
            buffer.remove(0, size);
            forward(frame, out);
        }
    }

    void forward(QByteArray frame, QTcpSocket *out)
    {
        const bool sealed = quint8(frame.at(5)) == quint8(FrameKind::Sealed);
        if (!sealed || m_armed == Tamper::None)
            return void(out->write(frame));
        const Tamper tamper = m_armed;
        if (tamper == Tamper::Reorder && !m_held) {
            m_held = frame; // sent after the next one
            return;
        }
        m_armed = Tamper::None;
        m_tampered = true;
        switch (tamper) {
        case Tamper::FlipBit:
            frame[FrameHeaderSize + (frame.size() - FrameHeaderSize) / 2] ^= 0x10;
            out->write(frame);
            break;
        case Tamper::Replay:
            out->write(frame);
            out->write(frame);
            break;
        case Tamper::Reorder:
            out->write(frame);
            out->write(*std::exchange(m_held, std::nullopt));
            break;
        case Tamper::Drop:
        case Tamper::None:
            break;
        }
    }

    quint16 m_targetPort;
    QTcpServer m_server;
    Tamper m_armed = Tamper::None;
    bool m_tampered = false;
    std::optional<QByteArray> m_held;
};

} // namespace mmpi::test

Q_DECLARE_METATYPE(mmpi::test::TamperingRelay::Tamper)
