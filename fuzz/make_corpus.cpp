// Writes the seed corpus of fuzz_framedecoder: a few valid frame streams of
// different kinds and item types, each behind the fuzzer's two control bytes
// (chunking, chunk seed). Run: fuzz_make_corpus <dir>.
#include "seedfiles.h"

#include <mmpi/wire/frame.h>
#include <mmpi/wire/itemcodec.h>

using namespace mmpi;

namespace {

bool writeSeed(const QString &dir, const QString &name, quint8 largestChunk, const QByteArray &stream)
{
    const char control[2] = {char(largestChunk), char(0x5A)};
    return fuzz::writeSeedFile(dir, name, {QByteArrayView(control, 2), stream});
}

template<typename T>
Frame itemFrame(FrameKind kind, std::initializer_list<T> items, ItemOrder order = WireItemOrder)
{
    const std::span<const T> span(items.begin(), items.size());
    Frame f = makeFrame(kind, ItemTraits<T>::type, quint32(items.size()),
                        encodeItems<T>(span, ItemTraits<T>::type, order));
    f.header.flags = itemOrderFlag(order);
    f.header.source = 0;
    f.header.destination = 1;
    f.header.tag = 42;
    f.header.sequence = 7;
    return f;
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    const QByteArray ints = encodeFrame(itemFrame<qint32>(FrameKind::Data, {1, -1, 0x7FFFFFFF}));
    const QByteArray doubles = encodeFrame(itemFrame<double>(FrameKind::Data, {1.5, -0.0}));
    const QByteArray littleShorts =
        encodeFrame(itemFrame<qint16>(FrameKind::Data, {1, -2, 0x1234}, QSysInfo::LittleEndian));
    const QByteArray bools = encodeFrame(itemFrame<bool>(FrameKind::Data, {true, false}));
    const QByteArray chars = encodeFrame(itemFrame<char16_t>(FrameKind::Data, {u'M', u'\uFFFF'}));
    const QByteArray heartbeat = encodeFrame(makeFrame(FrameKind::Heartbeat, ItemType::None, 0, {}));
    const QByteArray objects = encodeFrame(makeFrame(FrameKind::Control, ItemType::Object, 2,
                                                     encodeObjects({QByteArray("join"), QByteArray()})));
    bool ok = writeSeed(dir, QStringLiteral("int.bin"), 0, ints)
        && writeSeed(dir, QStringLiteral("double.bin"), 0, doubles)
        && writeSeed(dir, QStringLiteral("little-endian.bin"), 0, littleShorts)
        && writeSeed(dir, QStringLiteral("bool.bin"), 3, bools)
        && writeSeed(dir, QStringLiteral("char.bin"), 0, chars)
        && writeSeed(dir, QStringLiteral("heartbeat.bin"), 0, heartbeat)
        && writeSeed(dir, QStringLiteral("object.bin"), 5, objects)
        && writeSeed(dir, QStringLiteral("stream.bin"), 17, ints + heartbeat + objects + doubles);
    return fuzz::corpusStatus(ok, dir);
}
