// mmpi::mp::ObjectMessage: an object message (code 9) as a peer sent it, N and its
// Java serialization stream. Only a ChannelGroup makes one, from what it received,
// so an app can relay or echo Java's bytes but never send bytes of its own as code 9.
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
