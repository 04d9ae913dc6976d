// Writes the seed corpus of fuzz_mpdecoder: edu.rit.mp streams as MMPI's codec
// writes them (every send type, PJ's aliased codes, an object stream from PJ,
// several messages back to back), each behind the fuzzer's chunk-size bytes.
// Run: fuzz_make_mp_corpus <dir>.
#include "seedfiles.h"

#include <mmpi/mp/codec.h>

using namespace mmpi;
using namespace mmpi::mp;

namespace {

// `sizes` are the chunk sizes the stream is fed in, in turn (none: at once).
bool writeSeed(const QString &dir, const QString &name, QByteArrayView sizes, const QByteArray &stream)
{
    const char count = char(sizes.size());
    return fuzz::writeSeedFile(dir, name, {QByteArrayView(&count, 1), sizes, stream});
}

template<Primitive T>
QByteArray values(qint32 tag, std::initializer_list<T> items, ItemType as = ItemTraits<T>::type)
{
    return *encodeMessage(*makeMessage<T>(tag, std::span<const T>(items.begin(), items.size()), as));
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    const QByteArray bools = values<bool>(7, {true, false, true});
    const QByteArray bytes = values<qint8>(7, {-1, 127}, ItemType::Byte); // code 1, PJ's alias
    const QByteArray ubytes = values<quint8>(7, {255, 0});                // code 10
    const QByteArray ushorts = values<quint16>(7, {65535, 1});            // code 11
    const QByteArray shorts = values<qint16>(-5, {-32768, 3}, ItemType::Short);
    const QByteArray ints = values<qint32>(0, {1, -1, 0x7FFFFFFF});
    const QByteArray longs = values<qint64>(1, {-2, 0x0102030405060708});
    const QByteArray chars = values<char16_t>(2, {u'A', u'\u20AC'});
    const QByteArray floats = values<float>(3, {1.0f, -2.5f});
    const QByteArray doubles = values<double>(-2, {1.0, -0.5});
    const QByteArray empty = values<qint32>(9, {});
    // Only PJ sends objects: 6 bytes of a Java serialization stream.
    const QByteArray javaStream("\xAC\xED\x00\x05\x77\x04", 6);
    const QByteArray object = *encodeMessage(Message{4, quint8(ItemType::Object), 6, javaStream});
    const bool ok = writeSeed(dir, QStringLiteral("bool.bin"), {}, bools)
        && writeSeed(dir, QStringLiteral("byte.bin"), {}, bytes)
        && writeSeed(dir, QStringLiteral("ubyte.bin"), "\x01", ubytes)
        && writeSeed(dir, QStringLiteral("ushort.bin"), {}, ushorts)
        && writeSeed(dir, QStringLiteral("int.bin"), {}, ints)
        && writeSeed(dir, QStringLiteral("char.bin"), "\x04\x09", chars)
        && writeSeed(dir, QStringLiteral("double.bin"), {}, doubles)
        && writeSeed(dir, QStringLiteral("object.bin"), {}, object)
        && writeSeed(dir, QStringLiteral("stream.bin"), QByteArrayView("\x03\x0D\x00", 3),
                     shorts + longs + floats + empty + object + ints + bytes);
    return fuzz::corpusStatus(ok, dir);
}
