// A received message: its Status and the items a receive kept, still in wire
// form. values<T>() reads them as C++ values; an object message (code 9) is
// only ever opaque bytes, since MMPI cannot decode Java serialization, and
// comes with the ObjectMessage that lets the app send it on verbatim.
#pragma once

#include <mmpi/mp/codec.h>
#include <mmpi/mp/objectmessage.h>
#include <mmpi/mp/status.h>

#include <optional>

namespace mmpi::mp {

struct Received
{
    Status status;
    // The kept items, big-endian (status.kept items).
    QByteArray items;
    // Set for an object message only: what Channel::send(tag, ObjectMessage)
    // takes to send it back or on, byte for byte.
    std::optional<ObjectMessage> objectMessage;

    // The kept items as T; TypeMismatch for an object message or a code that
    // does not read as T (see codeDecodesAs()).
    template<Primitive T>
    Result<QList<T>> values() const
    {
        return decodeValues<T>(status.typeCode, status.kept, items);
    }
    // The Java serialization stream of an object message; empty otherwise.
    QByteArray javaSerializedBytes() const { return status.isObject() ? items : QByteArray(); }
};

} // namespace mmpi::mp
