// Packer / Unpacker: heterogeneous records round trip bit for bit in the packed
// format of docs/reference/packer.md, and an unpacker given a wrong request or hostile
// bytes fails with the right error, never advances on failure, never crashes.
#include "why.h"

#include <mmpi/comm/packer.h>
#include <mmpi/comm/unpacker.h>

#include <QDataStream>
#include <QRandomGenerator>
#include <QTest>
#include <QtEndian>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mmpi;
using mmpi::test::why;

namespace {

struct Reading
{
    qint32 sensor = 0;
    double value = 0;
    QString unit;
    bool operator==(const Reading &) const = default;
};

QDataStream &operator<<(QDataStream &out, const Reading &r)
{
    return out << r.sensor << r.value << r.unit;
}

QDataStream &operator>>(QDataStream &in, Reading &r)
{
    return in >> r.sensor >> r.value >> r.unit;
}

QByteArray bytes(std::initializer_list<int> values)
{
    QByteArray out;
    for (int v : values)
        out.append(char(quint8(v)));
    return out;
}

// A run header written by hand, for buffers no Packer would make.
QByteArray runHeader(ItemType type, quint32 count)
{
    char header[Packer::RunHeaderSize];
    header[0] = char(quint8(type));
    qToBigEndian<quint32>(count, header + 1);
    return QByteArray(header, Packer::RunHeaderSize);
}

// Bitwise: NaN != NaN and -0.0 == 0.0 would hide what must not change.
template<typename T>
bool sameBits(const QList<T> &a, const QList<T> &b)
{
    if (a.size() != b.size())
        return false;
    return a.isEmpty() || std::memcmp(a.constData(), b.constData(), size_t(a.size()) * sizeof(T)) == 0;
}

template<typename T>
void expectRun(Unpacker &unpacker, const QList<T> &expected)
{
    const auto got = unpacker.unpack<T>();
    QVERIFY2(got.hasValue(), qPrintable(why(got)));
    QVERIFY(sameBits(*got, expected));
}

template<typename T>
QList<T> floatEdges()
{
    using L = std::numeric_limits<T>;
    return {T(0), -T(0), L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(),
            L::min(), L::max(), L::lowest(), L::denorm_min(), T(-1.5)};
}

template<typename R>
Result<void> discard(const R &result)
{
    if (!result)
        return result.error();
    return success();
}

// Unpacks the next run as whatever type it declares, or returns why it cannot.
Result<void> unpackNext(Unpacker &u)
{
    switch (u.peekType().value_or(ItemType::None)) {
    case ItemType::Boolean: return discard(u.unpack<bool>());
    case ItemType::Byte:
    case ItemType::SignedByte: return discard(u.unpack<qint8>());
    case ItemType::UnsignedByte: return discard(u.unpackBytes());
    case ItemType::Short:
    case ItemType::SignedShort: return discard(u.unpack<qint16>());
    case ItemType::UnsignedShort: return discard(u.unpack<quint16>());
    case ItemType::Int: return discard(u.unpack<qint32>());
    case ItemType::Long: return discard(u.unpack<qint64>());
    case ItemType::Char: return discard(u.unpackString());
    case ItemType::Float: return discard(u.unpack<float>());
    case ItemType::Double: return discard(u.unpack<double>());
    case ItemType::Object: return discard(u.unpackObjectBytes());
    case ItemType::None: break; // or no readable header: no request can succeed
    }
    return discard(u.unpack<qint32>());
}

// Calls every kind of request once against the next run; each either succeeds
// or leaves the position where it was.
void probeEveryRequest(Unpacker &u)
{
    std::array<qint32, 4> ints{};
    const auto probes = {
        +[](Unpacker &x) { return discard(x.unpackValue<double>()); },
        +[](Unpacker &x) { return discard(x.unpackObject<Reading>()); },
        +[](Unpacker &x) { return discard(x.unpack<quint16>()); },
    };
    for (auto probe : probes) {
        Unpacker copy = u;
        const qsizetype before = copy.position();
        if (!probe(copy))
            QCOMPARE(copy.position(), before);
    }
    Unpacker copy = u;
    if (!copy.unpackInto(std::span<qint32>(ints)))
        QCOMPARE(copy.position(), u.position());
}

} // namespace

class tst_Packer : public QObject
{
    Q_OBJECT

private slots:
    void mixedRecordRoundTrip();
    void packedLayoutIsTheContract();
    void zeroLengthRuns();
    void singleValuesAndPeek();
    void packerBookkeeping();
    void unpackPastEndFailsAndDoesNotAdvance();
    void wrongTypeNamesBothTypesAndDoesNotAdvance();
    void byteAndSignedByteAlias();
    void unpackIntoNeedsRoom();
    void unpackValueNeedsExactlyOne();
    void objectMustStreamExactly();
    void truncatedRuns_data();
    void truncatedRuns();
    void everyPrefixFailsOnlyAsTruncated();
    void hugeCountsAllocateNothing();
    void unknownTypeCodes();
    void malformedBodies();
    void randomBuffersNeverCrash();
};

void tst_Packer::mixedRecordRoundTrip()
{
    // Given a record with a run of every item type, each holding its edge values,
    // a non-ASCII string, raw bytes and two objects
    const QList<bool> bools = {true, false, true};
    const QList<qint8> bytes8 = {-128, -1, 0, 127};
    const QList<quint8> ubytes = {0, 1, 255};
    const QList<qint16> shorts = {-32768, -1, 32767};
    const QList<quint16> ushorts = {0, 65535};
    const QList<qint32> ints = {std::numeric_limits<qint32>::min(), 0, std::numeric_limits<qint32>::max()};
    const QList<qint64> longs = {std::numeric_limits<qint64>::min(), -1, std::numeric_limits<qint64>::max()};
    const QList<char16_t> chars = {u'\0', u'\u00E9', u'\uFFFF', char16_t(0xD800)}; // lone surrogate too
    const QList<float> floats = floatEdges<float>();
    const QList<double> doubles = floatEdges<double>();
    const QString text = QStringLiteral("Gr\u00FC\u00DFe, \u4E16\u754C \U0001F30D");
    const QByteArray raw("\x00\xFF\x80 raw", 7);
    const Reading reading{7, -273.15, QStringLiteral("\u00B0C")};

    Packer packer;
    packer.pack(bools).pack(bytes8).pack(ubytes).pack(shorts).pack(ushorts).pack(ints)
        .pack(longs).pack(chars).pack(floats).pack(doubles).pack(text).pack(raw)
        .packObject(reading).packObject(QByteArray("opaque"));
    QCOMPARE(packer.runCount(), 14);

    // When it is unpacked in the same order
    Unpacker u(packer.buffer());

    // Then every run comes back bit for bit and the buffer is consumed exactly
    expectRun(u, bools);
    expectRun(u, bytes8);
    expectRun(u, ubytes);
    expectRun(u, shorts);
    expectRun(u, ushorts);
    expectRun(u, ints);
    expectRun(u, longs);
    expectRun(u, chars);
    expectRun(u, floats);
    expectRun(u, doubles);
    QCOMPARE(*u.unpackString(), text);
    QCOMPARE(*u.unpackBytes(), raw);
    const auto object = u.unpackObject<Reading>();
    QVERIFY2(object.hasValue(), qPrintable(why(object)));
    QVERIFY(*object == reading);
    QCOMPARE(*u.unpackObjectBytes(), QByteArray("opaque"));
    QVERIFY(u.atEnd());
    QCOMPARE(u.position(), packer.size());
    QVERIFY(std::signbit(floats.at(1)));
}

void tst_Packer::packedLayoutIsTheContract()
{
    // Given runs of Int, Short, Object and an empty Boolean run
    Packer packer;
    packer.pack(qint32(1)).pack(QList<qint16>{-2, 3}).packObject(QByteArray("ab")).pack(QList<bool>{});

    // Then each is type code, big-endian count, and the codec's encoding of the items
    const QByteArray expected = bytes({0x04, 0, 0, 0, 1,   0, 0, 0, 1,
                                       0x03, 0, 0, 0, 2,   0xFF, 0xFE, 0x00, 0x03,
                                       0x09, 0, 0, 0, 1,   0, 0, 0, 2, 'a', 'b',
                                       0x01, 0, 0, 0, 0});
    QCOMPARE(packer.buffer().toHex(' '), expected.toHex(' '));
    const QList<double> doubles = {1.0, -0.0};
    QCOMPARE(Packer().pack(doubles).buffer(),
             runHeader(ItemType::Double, 2) + encodeItems<double>(doubles));
    QCOMPARE(Packer().pack(QStringLiteral("h\u00E9")).buffer(),
             runHeader(ItemType::Char, 2) + bytes({0x00, 'h', 0x00, 0xE9}));
}

void tst_Packer::zeroLengthRuns()
{
    // Given empty runs of several kinds between two values
    Packer packer;
    packer.pack(qint32(1)).pack(QList<double>{}).pack(QString()).pack(QByteArray())
        .pack(std::span<const bool>()).pack(qint32(2));
    QCOMPARE(packer.runCount(), 6);
    QCOMPARE(packer.size(), 6 * Packer::RunHeaderSize + 2 * 4);

    // When unpacked, then they come back empty and in place
    Unpacker u(packer.buffer());
    QCOMPARE(*u.unpackValue<qint32>(), 1);
    QCOMPARE(u.peekCount(), std::optional<quint32>(0));
    QVERIFY(u.unpack<double>()->isEmpty());
    QVERIFY(u.unpackString()->isEmpty());
    QVERIFY(u.unpackBytes()->isEmpty());
    // An empty run fits an empty buffer, but is not a single value
    const auto single = u.unpackValue<bool>();
    QVERIFY(!single.hasValue());
    QCOMPARE(single.error().code, ErrorCode::CountMismatch);
    QCOMPARE(*u.unpackInto(std::span<bool>()), qsizetype(0));
    QCOMPARE(*u.unpackValue<qint32>(), 2);
    QVERIFY(u.atEnd());
}

void tst_Packer::singleValuesAndPeek()
{
    // Given single values of several types, including Byte declared as SignedByte
    Packer packer;
    packer.pack(qint32(5)).pack(u'\uFFFF').pack(2.5).pack(true).pack(qint8(-3), ItemType::SignedByte)
        .pack(quint16(65535));

    // Then peeking tells each run's type and count without consuming it
    Unpacker u(packer.buffer());
    const QList<ItemType> types = {ItemType::Int, ItemType::Char, ItemType::Double,
                                   ItemType::Boolean, ItemType::SignedByte, ItemType::UnsignedShort};
    qsizetype position = 0;
    for (ItemType type : types) {
        QCOMPARE(u.peekType(), std::optional<ItemType>(type));
        QCOMPARE(u.peekCount(), std::optional<quint32>(1));
        QCOMPARE(u.position(), position);
        position += Packer::RunHeaderSize + itemSize(type);
        switch (type) {
        case ItemType::Int: QCOMPARE(*u.unpackValue<qint32>(), 5); break;
        case ItemType::Char: QCOMPARE(*u.unpackValue<char16_t>(), u'\uFFFF'); break;
        case ItemType::Double: QCOMPARE(*u.unpackValue<double>(), 2.5); break;
        case ItemType::Boolean: QCOMPARE(*u.unpackValue<bool>(), true); break;
        case ItemType::SignedByte: QCOMPARE(*u.unpackValue<qint8>(), qint8(-3)); break;
        default: QCOMPARE(*u.unpackValue<quint16>(), quint16(65535)); break;
        }
    }
    QCOMPARE(u.position(), position);
    QVERIFY(u.atEnd());
    QCOMPARE(u.peekType(), std::nullopt);
    QCOMPARE(u.peekCount(), std::nullopt);
}

void tst_Packer::packerBookkeeping()
{
    // Given a packer with two runs and a copy of it
    Packer packer;
    QCOMPARE(packer.size(), qsizetype(0));
    packer.pack(qint64(1)).pack(QByteArray("xyz"));
    const Packer copy = packer;

    // When the original is cleared and reused
    packer.clear();
    QCOMPARE(packer.runCount(), 0);
    QVERIFY(packer.buffer().isEmpty());
    packer.pack(qint32(9));

    // Then the copy is untouched: Packer is a value type
    QCOMPARE(copy.runCount(), 2);
    QCOMPARE(copy.size(), 2 * Packer::RunHeaderSize + 8 + 3);
    QCOMPARE(packer.buffer(), runHeader(ItemType::Int, 1) + bytes({0, 0, 0, 9}));
}

void tst_Packer::unpackPastEndFailsAndDoesNotAdvance()
{
    // Given a buffer of one run, already unpacked
    Unpacker u(Packer().pack(qint32(1)).buffer());
    QVERIFY(u.unpackValue<qint32>().hasValue());
    const qsizetype end = u.position();

    // When unpacking further
    const auto past = u.unpack<qint32>();

    // Then it is a TruncatedPayload that says so, and nothing moves
    QVERIFY(!past.hasValue());
    QCOMPARE(past.error().code, ErrorCode::TruncatedPayload);
    QCOMPARE(past.error().message,
             QStringLiteral("nothing left to unpack: all 9 bytes of the buffer are consumed"));
    QCOMPARE(u.position(), end);
    QVERIFY(u.atEnd());
    QCOMPARE(u.unpackObjectBytes().error().code, ErrorCode::TruncatedPayload);

    Unpacker empty{QByteArray()};
    QVERIFY(empty.atEnd());
    QCOMPARE(empty.unpackString().error().code, ErrorCode::TruncatedPayload);
    QCOMPARE(empty.position(), qsizetype(0));
}

void tst_Packer::wrongTypeNamesBothTypesAndDoesNotAdvance()
{
    // Given a Double run followed by an Int run
    Unpacker u(Packer().pack(QList<double>{1.0, 2.0}).pack(qint32(3)).buffer());

    // When the first is asked for as Int, a string, an object or a single value
    const auto asInt = u.unpack<qint32>();

    // Then each is a TypeMismatch naming both types, and the position stays
    QVERIFY(!asInt.hasValue());
    QCOMPARE(asInt.error().code, ErrorCode::TypeMismatch);
    QCOMPARE(asInt.error().message, QStringLiteral("run at byte 0 holds Double items, cannot unpack as Int"));
    const auto asString = u.unpackString();
    QCOMPARE(asString.error().code, ErrorCode::TypeMismatch);
    QVERIFY(asString.error().message.contains(QLatin1String("Char")));
    const auto asObject = u.unpackObject<Reading>();
    QCOMPARE(asObject.error().code, ErrorCode::TypeMismatch);
    QVERIFY(asObject.error().message.contains(QLatin1String("Object")));
    // Same size is not enough: Long is 8 bytes like Double
    QCOMPARE(u.unpackValue<qint64>().error().code, ErrorCode::TypeMismatch);
    QCOMPARE(u.position(), qsizetype(0));

    // And the right requests still work afterwards
    QCOMPARE(*u.unpack<double>(), (QList<double>{1.0, 2.0}));
    QCOMPARE(*u.unpackValue<qint32>(), 3);
    QVERIFY(u.atEnd());
}

void tst_Packer::byteAndSignedByteAlias()
{
    // Given qint8 runs declared as Byte and as SignedByte, qint16 as Short and SignedShort
    const QList<qint8> small = {-128, 0, 127};
    const QList<qint16> shorts = {-32768, 32767};
    Packer packer;
    packer.pack(small).pack(small, ItemType::SignedByte).pack(shorts, ItemType::SignedShort).pack(shorts);
    QCOMPARE(packer.buffer().mid(0, 1), bytes({0x02}));
    QCOMPARE(packer.buffer().mid(8, 1), bytes({0x0A}));

    // Then each keeps its declared type and both decode as the one C++ type
    Unpacker u(packer.buffer());
    QCOMPARE(u.peekType(), std::optional(ItemType::Byte));
    QCOMPARE(*u.unpack<qint8>(), small);
    QCOMPARE(u.peekType(), std::optional(ItemType::SignedByte));
    // Unsigned and signed never mix, even with the same bytes
    const auto asUnsigned = u.unpack<quint8>();
    QCOMPARE(asUnsigned.error().message,
             QStringLiteral("run at byte 8 holds SignedByte items, cannot unpack as UnsignedByte"));
    QCOMPARE(u.unpackBytes().error().code, ErrorCode::TypeMismatch);
    QCOMPARE(*u.unpack<qint8>(), small);
    QCOMPARE(u.peekType(), std::optional(ItemType::SignedShort));
    QCOMPARE(u.unpack<quint16>().error().code, ErrorCode::TypeMismatch);
    QCOMPARE(*u.unpack<qint16>(), shorts);
    QCOMPARE(u.peekType(), std::optional(ItemType::Short));
    QCOMPARE(*u.unpack<qint16>(), shorts);
    QVERIFY(u.atEnd());
}

void tst_Packer::unpackIntoNeedsRoom()
{
    // Given a run of 10 Ints
    QList<qint32> ten;
    for (qint32 i = 0; i < 10; ++i)
        ten.append(i * 1000 - 3);
    Unpacker u(Packer().pack(ten).buffer());

    // When it is unpacked into a buffer of 4
    std::array<qint32, 4> small;
    small.fill(-7);
    const auto tooSmall = u.unpackInto(std::span<qint32>(small));

    // Then it is refused naming both counts, nothing is written or consumed
    QVERIFY(!tooSmall.hasValue());
    QCOMPARE(tooSmall.error().code, ErrorCode::TruncatedPayload);
    QCOMPARE(tooSmall.error().message, QStringLiteral("run of 10 Int items does not fit a buffer of 4"));
    QCOMPARE(small, (std::array<qint32, 4>{-7, -7, -7, -7}));
    QCOMPARE(u.position(), qsizetype(0));

    // And a larger buffer takes the 10 items and leaves the rest alone
    std::array<qint32, 16> large;
    large.fill(-7);
    const auto count = u.unpackInto(std::span<qint32>(large));
    QVERIFY2(count.hasValue(), qPrintable(why(count)));
    QCOMPARE(*count, qsizetype(10));
    QVERIFY(std::equal(ten.cbegin(), ten.cend(), large.cbegin()));
    QCOMPARE(large.at(10), -7);
    QVERIFY(u.atEnd());
}

void tst_Packer::unpackValueNeedsExactlyOne()
{
    // Given a run of two Ints
    Unpacker u(Packer().pack(QList<qint32>{4, 5}).buffer());

    // When one value is asked for, then it is a CountMismatch and nothing moves
    const auto one = u.unpackValue<qint32>();
    QCOMPARE(one.error().code, ErrorCode::CountMismatch);
    QCOMPARE(one.error().message, QStringLiteral("run at byte 0 holds 2 Int items, expected exactly 1"));
    QCOMPARE(u.position(), qsizetype(0));
    QCOMPARE(*u.unpack<qint32>(), (QList<qint32>{4, 5}));
}

void tst_Packer::objectMustStreamExactly()
{
    // Given an object record holding one qint32, then a Reading, then a run of 2 records
    const Reading reading{1, 0.5, QStringLiteral("V")};
    Packer packer;
    packer.packObject(qint32(7)).packObject(reading);
    const QByteArray twoRecords = runHeader(ItemType::Object, 2)
        + encodeObjects({QByteArray("a"), QByteArray("b")});
    Unpacker u(packer.buffer() + twoRecords);

    // When the qint32 record is read as a Reading, then the stream runs dry: an error
    const auto tooShort = u.unpackObject<Reading>();
    QCOMPARE(tooShort.error().code, ErrorCode::CountMismatch);
    QCOMPARE(tooShort.error().message, QStringLiteral("object record of 4 bytes ended before the value was read"));
    QCOMPARE(u.position(), qsizetype(0));
    QCOMPARE(*u.unpackObject<qint32>(), 7);

    // When the Reading is read as a qint32, then the bytes left over are an error
    const auto leftOver = u.unpackObject<qint32>();
    QCOMPARE(leftOver.error().code, ErrorCode::CountMismatch);
    QVERIFY(leftOver.error().message.contains(QLatin1String("left over")));
    const qsizetype atReading = u.position();
    QCOMPARE(atReading, Packer::RunHeaderSize + 4 + 4);
    QVERIFY(*u.unpackObject<Reading>() == reading);

    // And a run of two records is not one object
    QCOMPARE(u.unpackObjectBytes().error().code, ErrorCode::CountMismatch);
    QCOMPARE(u.peekCount(), std::optional<quint32>(2));
}

void tst_Packer::truncatedRuns_data()
{
    QTest::addColumn<QByteArray>("buffer");
    QTest::newRow("1 header byte") << bytes({0x04});
    QTest::newRow("4 header bytes") << bytes({0x04, 0, 0, 0});
    QTest::newRow("Int body short") << runHeader(ItemType::Int, 2) + bytes({0, 0, 0, 1, 0, 0});
    QTest::newRow("Double body missing") << runHeader(ItemType::Double, 1);
    QTest::newRow("object length cut") << runHeader(ItemType::Object, 1) + bytes({0, 0});
    QTest::newRow("object body cut") << runHeader(ItemType::Object, 1) + bytes({0, 0, 0, 5, 'a', 'b'});
    QTest::newRow("second object missing") << runHeader(ItemType::Object, 2) + bytes({0, 0, 0, 0});
    QTest::newRow("object length 0xFFFFFFFF")
        << runHeader(ItemType::Object, 1) + bytes({0xFF, 0xFF, 0xFF, 0xFF, 'x'});
}

void tst_Packer::truncatedRuns()
{
    // Given a buffer whose only run is cut short
    QFETCH(QByteArray, buffer);
    Unpacker u(buffer);

    // When it is unpacked as its own type, then it is TruncatedPayload, not advanced
    const auto result = unpackNext(u);
    QVERIFY(!result.hasValue());
    QCOMPARE(result.error().code, ErrorCode::TruncatedPayload);
    QCOMPARE(u.position(), qsizetype(0));
    QVERIFY(!u.atEnd());
}

void tst_Packer::everyPrefixFailsOnlyAsTruncated()
{
    // Given a record of several runs and where each run ends
    Packer packer;
    QList<qsizetype> ends;
    auto mark = [&] { ends.append(packer.size()); };
    packer.pack(QList<bool>{true, false}); mark();
    packer.pack(QStringLiteral("\u00E9t\u00E9")); mark();
    packer.pack(qint64(-5)); mark();
    packer.packObject(Reading{3, 1.25, QStringLiteral("m")}); mark();
    packer.pack(QList<quint16>{}); mark();
    packer.pack(QByteArray("tail")); mark();
    const QByteArray full = packer.buffer();

    // When every proper prefix is unpacked run by run
    for (qsizetype cut = 0; cut < full.size(); ++cut) {
        Unpacker u(full.left(cut));
        qsizetype done = 0;
        while (true) {
            const qsizetype before = u.position();
            const auto result = unpackNext(u);
            if (!result) {
                // Then the complete runs came back and the first cut one is
                // TruncatedPayload, leaving the position at its start
                QCOMPARE(result.error().code, ErrorCode::TruncatedPayload);
                QCOMPARE(u.position(), before);
                break;
            }
            QCOMPARE(u.position(), ends.at(done++));
        }
        QVERIFY(done < ends.size() && ends.at(done) > cut);
    }
}

void tst_Packer::hugeCountsAllocateNothing()
{
    // Given runs that claim 0xFFFFFFFF items (or 0x20000001 Longs, 8 bytes if
    // the size wrapped at 32 bits) over a few real bytes
    for (int code = 1; code <= 13; ++code) {
        const auto type = ItemType(code);
        const QByteArray buffer = runHeader(type, 0xFFFFFFFFu) + QByteArray(16, '\0');
        Unpacker u(buffer);

        // When unpacked, then TruncatedPayload at once, nothing advanced or allocated
        const auto result = unpackNext(u);
        QVERIFY2(!result.hasValue(), qPrintable(itemTypeName(type)));
        QCOMPARE(result.error().code, ErrorCode::TruncatedPayload);
        QCOMPARE(u.position(), qsizetype(0));
        QCOMPARE(u.peekCount(), std::optional<quint32>(0xFFFFFFFFu));
        std::array<qint32, 2> out{};
        QCOMPARE(u.unpackInto(std::span<qint32>(out)).error().code,
                 type == ItemType::Int ? ErrorCode::TruncatedPayload : ErrorCode::TypeMismatch);
    }
    Unpacker wrapped(runHeader(ItemType::Long, 0x20000001u) + QByteArray(8, '\1'));
    const auto longs = wrapped.unpack<qint64>();
    QCOMPARE(longs.error().code, ErrorCode::TruncatedPayload);
    QCOMPARE(longs.error().message,
             QStringLiteral("run of 536870913 Long items at byte 0 needs 4294967304 bytes but only 8 remain"));
}

void tst_Packer::unknownTypeCodes()
{
    // Given a good run followed by a run with each unknown type code
    for (int code = 14; code < 256; ++code) {
        QByteArray buffer = Packer().pack(qint32(1)).buffer();
        buffer += bytes({code, 0, 0, 0, 1, 0, 0, 0, 2});
        Unpacker u(buffer);

        // Then the good run unpacks and the bad one is a BadItemType naming the code
        QCOMPARE(*u.unpackValue<qint32>(), 1);
        QCOMPARE(u.peekType(), std::nullopt);
        const auto bad = u.unpack<qint32>();
        QCOMPARE(bad.error().code, ErrorCode::BadItemType);
        QCOMPARE(bad.error().message, QStringLiteral("run at byte 9 has unknown item type code %1").arg(code));
        QCOMPARE(u.unpackObjectBytes().error().code, ErrorCode::BadItemType);
        QCOMPARE(u.position(), qsizetype(9));
    }
}

void tst_Packer::malformedBodies()
{
    // Given a Boolean run with a byte that is neither 0 nor 1
    Unpacker booleans(runHeader(ItemType::Boolean, 3) + bytes({1, 0, 2}));
    std::array<bool, 3> out{};

    // Then every way of reading it is a CountMismatch, and it does not advance
    const auto list = booleans.unpack<bool>();
    QCOMPARE(list.error().code, ErrorCode::CountMismatch);
    QCOMPARE(list.error().message,
             QStringLiteral("run at byte 0: Boolean item 3 of 3 has byte value 0x02 (must be 0 or 1)"));
    QCOMPARE(booleans.unpackInto(std::span<bool>(out)).error().code, ErrorCode::CountMismatch);
    QCOMPARE(booleans.position(), qsizetype(0));

    // Given a None run (no Packer writes one), then nothing unpacks it
    Unpacker none(runHeader(ItemType::None, 0));
    QCOMPARE(none.peekType(), std::optional(ItemType::None));
    const auto asInt = none.unpack<qint32>();
    QCOMPARE(asInt.error().message, QStringLiteral("run at byte 0 holds None items, cannot unpack as Int"));
    QCOMPARE(none.unpackObjectBytes().error().code, ErrorCode::TypeMismatch);
}

void tst_Packer::randomBuffersNeverCrash()
{
    // Given a valid record to mutate, and a fixed seed so failures reproduce
    const QByteArray valid = Packer().pack(QList<bool>{true}).pack(QStringLiteral("ab"))
                                 .packObject(Reading{1, 2, QStringLiteral("c")}).pack(2.0)
                                 .pack(QByteArray("xy")).pack(QList<qint16>{1, 2}).buffer();
    QRandomGenerator rng(20240601);

    for (int round = 0; round < 4000; ++round) {
        QByteArray buffer;
        if (round % 2 == 0) {
            // Random bytes; type codes skewed into the valid range, counts small
            // or huge, so that runs get past the header checks often
            const int length = int(rng.bounded(48));
            for (int i = 0; i < length; ++i)
                buffer.append(char(rng.bounded(i % 5 == 0 ? 16 : 256)));
        } else {
            // The valid record with a few bytes changed and maybe cut short
            buffer = valid.left(qsizetype(rng.bounded(int(valid.size()) + 1)));
            for (int flips = int(rng.bounded(4)); flips > 0 && !buffer.isEmpty(); --flips)
                buffer[qsizetype(rng.bounded(int(buffer.size())))] = char(rng.generate());
        }

        // When every request is tried on each run and the runs are read in turn
        Unpacker u(buffer);
        while (!u.atEnd()) {
            probeEveryRequest(u);
            const qsizetype before = u.position();
            const auto result = unpackNext(u);
            if (!result) {
                // Then failures are the documented codes and do not advance
                QCOMPARE(u.position(), before);
                const ErrorCode code = result.error().code;
                QVERIFY2(code == ErrorCode::TruncatedPayload || code == ErrorCode::BadItemType
                             || code == ErrorCode::TypeMismatch || code == ErrorCode::CountMismatch,
                         qPrintable(result.error().toString()));
                break;
            }
            // And successes always make progress within the buffer
            QVERIFY(u.position() >= before + Packer::RunHeaderSize);
            QVERIFY(u.position() <= buffer.size());
        }
        if (QTest::currentTestFailed())
            return;
    }
}

QTEST_APPLESS_MAIN(tst_Packer)
#include "tst_packer.moc"
