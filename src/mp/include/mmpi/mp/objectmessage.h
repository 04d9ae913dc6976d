// mmpi::mp::ObjectMessage: an object message (code 9) exactly as a peer sent
// it, N and the bytes of its Java serialization stream. Only a ChannelGroup
// makes one, from a message it received, so MMPI sends no Java serialization
// but what a Java program wrote: an app can relay or echo it, never forge it.
#pragma once

#include <QByteArray>
#include <QtGlobal>

namespace mmpi::mp {

class ObjectMessage
{
public:
    // N as the sender wrote it: the length of the stream in bytes.
    qint32 count() const { return m_count; }
    // The Java serialization stream, opaque to MMPI.
    const QByteArray &bytes() const { return m_bytes; }

    bool operator==(const ObjectMessage &) const = default;

private:
    friend class ChannelGroup;
    ObjectMessage(qint32 count, QByteArray bytes) : m_count(count), m_bytes(std::move(bytes)) {}

    qint32 m_count;
    QByteArray m_bytes;
};

} // namespace mmpi::mp
