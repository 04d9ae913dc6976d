// Item codec: every edu.rit.mp item type round trips bit-exactly, the wire form
// is big-endian byte for byte, and a payload that does not match its declared
// type or count is refused with the right error.
#include "why.h"

#include <mmpi/wire/itemcodec.h>

#include <QDataStream>
#include <QRandomGenerator>
#include <QTest>
#include <QVariantMap>
#include <QtEndian>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mmpi;
using mmpi::test::why;

namespace {

QByteArray bytes(std::initializer_list<int> values)
{
    QByteArray out;
    for (int v : values)
        out.append(char(quint8(v)));
    return out;
}

// Bitwise comparison: NaN != NaN and -0.0 == 0.0 would hide exactly the
// differences this codec must not introduce.
template<typename T>
bool sameBits(const QList<T> &a, const QList<T> &b)
{
    if (a.size() != b.size())
        return false;
    if constexpr (std::is_same_v<T, bool>)
        return a == b;
    else
        return a.isEmpty() || std::memcmp(a.constData(), b.constData(), size_t(a.size()) * sizeof(T)) == 0;
}

// The unsigned integer of T's size, whose bits an item of T travels as.
template<typename T>
using Bits = std::conditional_t<sizeof(T) == 1, quint8, std::conditional_t<sizeof(T) == 2, quint16,
             std::conditional_t<sizeof(T) == 4, quint32, quint64>>>;

template<typename T>
QList<T> edgeValues()
{
    QList<T> values;
    if constexpr (std::is_same_v<T, bool>) {
        values = {true, false, false, true, true};
    } else if constexpr (std::is_floating_point_v<T>) {
        using L = std::numeric_limits<T>;
        values = {T(0), -T(0), T(1), T(-1.5), L::min(), L::max(), L::lowest(), L::denorm_min(),
                  L::infinity(), -L::infinity(), L::quiet_NaN(), L::epsilon()};
    } else {
        using L = std::numeric_limits<T>;
        values = {T(0), T(1), L::min(), L::max(), T(L::max() / 3), T(0x5A)};
        if constexpr (L::is_signed)
            values.append(T(-1));
    }
    // Plus random bit patterns (fixed seed) so every byte position is exercised.
    QRandomGenerator rng(1234);
    for (int i = 0; i < 64; ++i) {
        if constexpr (std::is_same_v<T, bool>) {
            values.append(rng.bounded(2) == 1);
        } else {
            values.append(std::bit_cast<T>(Bits<T>(rng.generate64())));
        }
    }
    return values;
}

template<typename T>
void checkRoundTrip(ItemType as)
{
    const QList<T> values = edgeValues<T>();
    const QByteArray payload = encodeItems<T>(values, as);
    QCOMPARE(payload.size(), values.size() * itemSize(as));
    QVERIFY(validatePayload(as, quint32(values.size()), payload).hasValue());

    const auto decoded = decodeItems<T>(as, quint32(values.size()), payload);
    QVERIFY2(decoded.hasValue(), qPrintable(why(decoded)));
    QVERIFY(sameBits(*decoded, values));
}

template<typename T>
void checkEmpty(ItemType as)
{
    const QByteArray payload = encodeItems<T>(std::span<const T>(), as);
    QVERIFY(payload.isEmpty());
    const auto decoded = decodeItems<T>(as, 0, payload);
    QVERIFY(decoded.hasValue());
    QVERIFY(decoded->isEmpty());
}

template<typename T>
QByteArray encoded(std::initializer_list<T> values)
{
    return encodeItems<T>(std::span<const T>(values.begin(), values.size()));
}

} // namespace

Q_DECLARE_METATYPE(mmpi::ItemType)

class tst_ItemCodec : public QObject
{
    Q_OBJECT

private slots:
    void itemTypeTable();
    void roundTrip_data();
    void roundTrip();
    void emptyArrays_data();
    void emptyArrays();
    void bigEndianLayout_data();
    void bigEndianLayout();
    void longRunsMatchTheItemByItemLayout();
    void integerLimits();
    void floatSpecialsKeepTheirBits();
    void byteAndSignedByteAlias();
    void typeMismatchNamesBothTypes();
    void countMismatch();
    void countOverflowIsNotAMatch();
    void invalidBooleanRejected();
    void objectsRoundTrip();
    void qtSerializedObjectRoundTrip();
    void malformedObjectsRejected_data();
    void malformedObjectsRejected();
    void validatePayloadRules();
};

void tst_ItemCodec::itemTypeTable()
{
    // Sizes from the edu.rit.mp table; None and Object are variable (0).
    const QList<std::pair<ItemType, int>> sizes = {
        {ItemType::None, 0},         {ItemType::Boolean, 1},     {ItemType::Byte, 1},
        {ItemType::Short, 2},        {ItemType::Int, 4},         {ItemType::Long, 8},
        {ItemType::Char, 2},         {ItemType::Float, 4},       {ItemType::Double, 8},
        {ItemType::Object, 0},       {ItemType::SignedByte, 1},  {ItemType::SignedShort, 2},
        {ItemType::UnsignedByte, 1}, {ItemType::UnsignedShort, 2}};
    for (const auto &[type, size] : sizes) {
        QCOMPARE(itemSize(type), size);
        QCOMPARE(itemTypeFromCode(quint8(type)), std::optional<ItemType>(type));
    }
    QCOMPARE(quint8(ItemType::UnsignedShort), quint8(13));
    for (int code = 14; code < 256; ++code)
        QVERIFY(!itemTypeFromCode(quint8(code)).has_value());

    QCOMPARE(itemTypeName(ItemType::Double), QStringLiteral("Double"));
    QCOMPARE(itemTypeName(ItemType::UnsignedShort), QStringLiteral("UnsignedShort"));
    QCOMPARE(itemTypeName(ItemType(200)), QStringLiteral("ItemType(200)"));
}

void tst_ItemCodec::roundTrip_data()
{
    QTest::addColumn<ItemType>("type");
    for (int code = 1; code <= 13; ++code) {
        const auto type = ItemType(code);
        if (type != ItemType::Object)
            QTest::newRow(qPrintable(itemTypeName(type))) << type;
    }
}

void tst_ItemCodec::roundTrip()
{
    QFETCH(ItemType, type);
    switch (type) {
    case ItemType::Boolean: checkRoundTrip<bool>(type); break;
    case ItemType::Byte:
    case ItemType::SignedByte: checkRoundTrip<qint8>(type); break;
    case ItemType::UnsignedByte: checkRoundTrip<quint8>(type); break;
    case ItemType::Short:
    case ItemType::SignedShort: checkRoundTrip<qint16>(type); break;
    case ItemType::UnsignedShort: checkRoundTrip<quint16>(type); break;
    case ItemType::Int: checkRoundTrip<qint32>(type); break;
    case ItemType::Long: checkRoundTrip<qint64>(type); break;
    case ItemType::Char: checkRoundTrip<char16_t>(type); break;
    case ItemType::Float: checkRoundTrip<float>(type); break;
    case ItemType::Double: checkRoundTrip<double>(type); break;
    default: QFAIL("not a fixed-size type");
    }
}

void tst_ItemCodec::emptyArrays_data()
{
    roundTrip_data();
}

void tst_ItemCodec::emptyArrays()
{
    QFETCH(ItemType, type);
    switch (type) {
    case ItemType::Boolean: checkEmpty<bool>(type); break;
    case ItemType::Byte:
    case ItemType::SignedByte: checkEmpty<qint8>(type); break;
    case ItemType::UnsignedByte: checkEmpty<quint8>(type); break;
    case ItemType::Short:
    case ItemType::SignedShort: checkEmpty<qint16>(type); break;
    case ItemType::UnsignedShort: checkEmpty<quint16>(type); break;
    case ItemType::Int: checkEmpty<qint32>(type); break;
    case ItemType::Long: checkEmpty<qint64>(type); break;
    case ItemType::Char: checkEmpty<char16_t>(type); break;
    case ItemType::Float: checkEmpty<float>(type); break;
    case ItemType::Double: checkEmpty<double>(type); break;
    default: QFAIL("not a fixed-size type");
    }
}

void tst_ItemCodec::bigEndianLayout_data()
{
    QTest::addColumn<QByteArray>("actual");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("bool") << encoded<bool>({true, false, true}) << bytes({1, 0, 1});
    QTest::newRow("qint8") << encoded<qint8>({-128, -1, 127}) << bytes({0x80, 0xFF, 0x7F});
    QTest::newRow("quint8") << encoded<quint8>({0, 255}) << bytes({0x00, 0xFF});
    QTest::newRow("qint16") << encoded<qint16>({0x0102, -2}) << bytes({0x01, 0x02, 0xFF, 0xFE});
    QTest::newRow("quint16") << encoded<quint16>({0xABCD}) << bytes({0xAB, 0xCD});
    QTest::newRow("qint32") << encoded<qint32>({0x01020304, -2})
                            << bytes({0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0xFF, 0xFE});
    QTest::newRow("qint64") << encoded<qint64>({0x0102030405060708LL})
                            << bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08});
    QTest::newRow("char16_t") << encoded<char16_t>({u'\u00E9', u'\u20AC'})
                              << bytes({0x00, 0xE9, 0x20, 0xAC});
    QTest::newRow("float") << encoded<float>({1.0f, -2.0f})
                           << bytes({0x3F, 0x80, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00});
    QTest::newRow("double") << encoded<double>({1.0})
                            << bytes({0x3F, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
    QTest::newRow("objects") << encodeObjects({QByteArray("ab"), QByteArray()})
                             << bytes({0, 0, 0, 2, 'a', 'b', 0, 0, 0, 0});
}

void tst_ItemCodec::bigEndianLayout()
{
    QFETCH(QByteArray, actual);
    QFETCH(QByteArray, expected);
    QCOMPARE(actual.toHex(' '), expected.toHex(' '));
}

namespace {

// The same items little-endian (as a Data frame with LittleEndianItems
// carries them): each item's bytes reversed from the big-endian `wire`, and
// back; reordered from `wire` without touching it when shared; in the host's
// order a view of the items themselves.
template<typename T>
void checkLittleEndian(const QList<T> &items, const QByteArray &wire)
{
    const auto count = quint32(items.size());
    const QByteArray little = encodeItems<T>(items, ItemTraits<T>::type, QSysInfo::LittleEndian);
    for (qsizetype i = 0; i < items.size(); ++i) {
        char one[sizeof(T)];
        qToLittleEndian(std::bit_cast<Bits<T>>(items.at(i)), one);
        QVERIFY(std::memcmp(little.constData() + i * sizeof(T), one, sizeof(T)) == 0);
    }
    const auto list = decodeItems<T>(ItemTraits<T>::type, count, little, QSysInfo::LittleEndian);
    QVERIFY(list.hasValue());
    QVERIFY(sameBits(*list, items));
    QList<T> into(items.size());
    QVERIFY(decodeItemsInto<T>(ItemTraits<T>::type, count, little, std::span<T>(into), QSysInfo::LittleEndian));
    QVERIFY(sameBits(into, items));

    const QByteArray shared = wire;
    QCOMPARE(reorderItems(ItemTraits<T>::type, shared, QSysInfo::BigEndian, QSysInfo::LittleEndian), little);
    QCOMPARE(shared, wire);
    QByteArray own = wire;
    own.detach();
    const char *where = own.constData();
    const QByteArray reordered = reorderItems(ItemTraits<T>::type, std::move(own), QSysInfo::BigEndian,
                                              QSysInfo::LittleEndian);
    QCOMPARE(reordered, little);
    QVERIFY(reordered.constData() == where); // in place: no one else held it (pointers, not strings)
    QByteArray swapped = little;
    swapItemsInPlace(ItemTraits<T>::type, swapped.data(), qsizetype(count));
    QCOMPARE(swapped, wire);

    const QByteArray view = viewOrEncodeItems<T>(std::span<const T>(items), HostItemOrder);
    QVERIFY(view.constData() == reinterpret_cast<const char *>(items.constData()));
    QCOMPARE(view, HostItemOrder == QSysInfo::LittleEndian ? little : wire);
}

// Runs long enough for the vector kernels (and every tail length after
// them): each item's wire bytes against a swap of that item alone, and the
// way back, into a list and into a buffer.
template<typename T>
void checkLongRuns()
{
    for (qsizetype count : {1, 5, 15, 16, 17, 31, 33, 64, 257, 1001}) {
        QList<T> items;
        QRandomGenerator rng{quint32(count)};
        for (qsizetype i = 0; i < count; ++i)
            items.append(std::bit_cast<T>(Bits<T>(rng.generate64())));
        const QByteArray wire = encodeItems<T>(items);
        QCOMPARE(wire.size(), count * qsizetype(sizeof(T)));
        for (qsizetype i = 0; i < count; ++i) {
            char one[sizeof(T)];
            qToBigEndian(std::bit_cast<Bits<T>>(items.at(i)), one);
            QVERIFY2(std::memcmp(wire.constData() + i * sizeof(T), one, sizeof(T)) == 0,
                     qPrintable(QStringLiteral("item %1 of %2").arg(i).arg(count)));
        }
        const auto list = decodeItems<T>(ItemTraits<T>::type, quint32(count), wire);
        QVERIFY(list.hasValue());
        QVERIFY(sameBits(*list, items));
        QList<T> into(count);
        QVERIFY(decodeItemsInto<T>(ItemTraits<T>::type, quint32(count), wire, std::span<T>(into)).hasValue());
        QVERIFY(sameBits(into, items));
        checkLittleEndian<T>(items, wire);
    }
}

} // namespace

void tst_ItemCodec::longRunsMatchTheItemByItemLayout()
{
    checkLongRuns<quint8>();
    checkLongRuns<qint16>();
    checkLongRuns<char16_t>();
    checkLongRuns<qint32>();
    checkLongRuns<float>();
    checkLongRuns<qint64>();
    checkLongRuns<double>();
}

void tst_ItemCodec::integerLimits()
{
    QCOMPARE(encoded<qint16>({std::numeric_limits<qint16>::min()}), bytes({0x80, 0x00}));
    QCOMPARE(encoded<quint16>({65535}), bytes({0xFF, 0xFF}));
    QCOMPARE(encoded<qint32>({std::numeric_limits<qint32>::min()}), bytes({0x80, 0, 0, 0}));
    QCOMPARE(encoded<qint32>({std::numeric_limits<qint32>::max()}), bytes({0x7F, 0xFF, 0xFF, 0xFF}));
    QCOMPARE(encoded<qint64>({std::numeric_limits<qint64>::min()}), bytes({0x80, 0, 0, 0, 0, 0, 0, 0}));
    QCOMPARE(encoded<char16_t>({u'\uFFFF', u'\0'}), bytes({0xFF, 0xFF, 0x00, 0x00}));

    // And back: each extreme survives decoding as its own type.
    const auto u16 = decodeItems<quint16>(ItemType::UnsignedShort, 1, bytes({0xFF, 0xFF}));
    QVERIFY(u16.hasValue());
    QCOMPARE(u16->at(0), quint16(65535));
    const auto u8 = decodeItems<quint8>(ItemType::UnsignedByte, 1, bytes({0xFF}));
    QVERIFY(u8.hasValue());
    QCOMPARE(u8->at(0), quint8(255));
    const auto s8 = decodeItems<qint8>(ItemType::Byte, 1, bytes({0x80}));
    QVERIFY(s8.hasValue());
    QCOMPARE(s8->at(0), qint8(-128));
    const auto chars = decodeItems<char16_t>(ItemType::Char, 2, bytes({0xFF, 0xFF, 0, 0}));
    QVERIFY(chars.hasValue());
    QCOMPARE(chars->at(0), u'\uFFFF');
    QCOMPARE(chars->at(1), u'\0');
    const auto longs = decodeItems<qint64>(ItemType::Long, 2, encoded<qint64>(
        {std::numeric_limits<qint64>::min(), std::numeric_limits<qint64>::max()}));
    QVERIFY(longs.hasValue());
    QCOMPARE(longs->at(0), std::numeric_limits<qint64>::min());
    QCOMPARE(longs->at(1), std::numeric_limits<qint64>::max());
}

void tst_ItemCodec::floatSpecialsKeepTheirBits()
{
    // A quiet NaN with a payload, a signalling NaN, negative zero, infinities.
    const QList<quint32> floatBits = {0x7FC12345, 0x7F800001, 0xFFC00000, 0x80000000,
                                      0x7F800000, 0xFF800000, 0x00000001};
    QList<float> floats;
    for (quint32 b : floatBits)
        floats.append(std::bit_cast<float>(b));
    const QByteArray fp = encodeItems<float>(floats);
    QCOMPARE(fp.left(4), bytes({0x7F, 0xC1, 0x23, 0x45}));
    QCOMPARE(fp.mid(12, 4), bytes({0x80, 0, 0, 0}));
    const auto fd = decodeItems<float>(ItemType::Float, quint32(floats.size()), fp);
    QVERIFY(fd.hasValue());
    for (qsizetype i = 0; i < floats.size(); ++i)
        QCOMPARE(std::bit_cast<quint32>(fd->at(i)), floatBits.at(i));
    QVERIFY(std::signbit(fd->at(3)));
    QCOMPARE(fd->at(4), std::numeric_limits<float>::infinity());
    QCOMPARE(fd->at(5), -std::numeric_limits<float>::infinity());

    const QList<quint64> doubleBits = {0x7FF8DEADBEEF0001ULL, 0x7FF0000000000001ULL,
                                       0x8000000000000000ULL, 0xFFF0000000000000ULL};
    QList<double> doubles;
    for (quint64 b : doubleBits)
        doubles.append(std::bit_cast<double>(b));
    const QByteArray dp = encodeItems<double>(doubles);
    QCOMPARE(dp.left(8), bytes({0x7F, 0xF8, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01}));
    const auto dd = decodeItems<double>(ItemType::Double, quint32(doubles.size()), dp);
    QVERIFY(dd.hasValue());
    for (qsizetype i = 0; i < doubles.size(); ++i)
        QCOMPARE(std::bit_cast<quint64>(dd->at(i)), doubleBits.at(i));
    QVERIFY(std::signbit(dd->at(2)));
}

void tst_ItemCodec::byteAndSignedByteAlias()
{
    const QList<qint8> values = {-128, -1, 0, 1, 127};
    const QByteArray asByte = encodeItems<qint8>(values, ItemType::Byte);
    const QByteArray asSigned = encodeItems<qint8>(values, ItemType::SignedByte);
    QCOMPARE(asByte, asSigned);
    for (ItemType type : {ItemType::Byte, ItemType::SignedByte}) {
        const auto decoded = decodeItems<qint8>(type, quint32(values.size()), asByte);
        QVERIFY2(decoded.hasValue(), qPrintable(itemTypeName(type)));
        QCOMPARE(*decoded, values);
    }
    // Same bytes, other signedness: refused rather than silently reinterpreted.
    const auto unsignedView = decodeItems<quint8>(ItemType::Byte, quint32(values.size()), asByte);
    QVERIFY(!unsignedView.hasValue());
    QCOMPARE(unsignedView.error().code, ErrorCode::TypeMismatch);

    const QList<qint16> shorts = {-32768, 32767};
    QCOMPARE(encodeItems<qint16>(shorts, ItemType::Short), encodeItems<qint16>(shorts, ItemType::SignedShort));
    const auto s = decodeItems<qint16>(ItemType::SignedShort, 2, encodeItems<qint16>(shorts));
    QVERIFY(s.hasValue());
    QCOMPARE(*s, shorts);
    QVERIFY(!decodeItems<quint16>(ItemType::SignedShort, 2, encodeItems<qint16>(shorts)).hasValue());
}

void tst_ItemCodec::typeMismatchNamesBothTypes()
{
    const QByteArray payload = encoded<double>({1.0, 2.0});
    const auto r = decodeItems<qint32>(ItemType::Double, 2, payload);
    QVERIFY(!r.hasValue());
    QCOMPARE(r.error().code, ErrorCode::TypeMismatch);
    QCOMPARE(r.error().message, QStringLiteral("payload holds Double items, cannot decode as Int"));

    // Same size is not enough: Long and Double are both 8 bytes.
    const auto sameSize = decodeItems<qint64>(ItemType::Double, 2, payload);
    QVERIFY(!sameSize.hasValue());
    QCOMPARE(sameSize.error().code, ErrorCode::TypeMismatch);
    QVERIFY(sameSize.error().message.contains(QLatin1String("Long")));

    const auto objects = decodeItems<quint8>(ItemType::Object, 0, QByteArray());
    QVERIFY(!objects.hasValue());
    QCOMPARE(objects.error().code, ErrorCode::TypeMismatch);
}

void tst_ItemCodec::countMismatch()
{
    const QByteArray eight = encoded<qint32>({1, 2});
    const auto tooMany = decodeItems<qint32>(ItemType::Int, 3, eight);
    QVERIFY(!tooMany.hasValue());
    QCOMPARE(tooMany.error().code, ErrorCode::CountMismatch);
    QCOMPARE(tooMany.error().message, QStringLiteral("3 Int items need 12 bytes but the payload has 8"));

    const auto tooFew = decodeItems<qint32>(ItemType::Int, 1, eight);
    QVERIFY(!tooFew.hasValue());
    QCOMPARE(tooFew.error().code, ErrorCode::CountMismatch);

    const auto ragged = decodeItems<qint16>(ItemType::Short, 1, bytes({1, 2, 3}));
    QVERIFY(!ragged.hasValue());
    QCOMPARE(ragged.error().code, ErrorCode::CountMismatch);
}

void tst_ItemCodec::countOverflowIsNotAMatch()
{
    // 0x20000001 * 8 = 0x1'0000'0008, which is 8 in 32-bit arithmetic.
    const QByteArray eight = encoded<qint64>({42});
    const auto r = decodeItems<qint64>(ItemType::Long, 0x20000001u, eight);
    QVERIFY(!r.hasValue());
    QCOMPARE(r.error().code, ErrorCode::CountMismatch);
    QVERIFY(!validatePayload(ItemType::Long, 0x20000001u, eight).hasValue());
}

void tst_ItemCodec::invalidBooleanRejected()
{
    const QByteArray payload = bytes({0, 1, 2});
    const auto r = decodeItems<bool>(ItemType::Boolean, 3, payload);
    QVERIFY(!r.hasValue());
    QCOMPARE(r.error().code, ErrorCode::CountMismatch);
    QCOMPARE(r.error().message, QStringLiteral("Boolean item 3 of 3 has byte value 0x02 (must be 0 or 1)"));
    QCOMPARE(validatePayload(ItemType::Boolean, 3, payload).error().code, ErrorCode::CountMismatch);
    QVERIFY(!decodeItems<bool>(ItemType::Boolean, 1, bytes({0xFF})).hasValue());
    QVERIFY(decodeItems<bool>(ItemType::Boolean, 2, bytes({1, 0})).hasValue());
}

void tst_ItemCodec::objectsRoundTrip()
{
    const QList<QByteArray> objects = {QByteArray(), QByteArray("x"), QByteArray("\0\0\xff", 3),
                                       QByteArray(70000, 'q'), QByteArray("last")};
    const QByteArray payload = encodeObjects(objects);
    QCOMPARE(payload.size(), 5 * 4 + 0 + 1 + 3 + 70000 + 4);
    QVERIFY(validatePayload(ItemType::Object, 5, payload).hasValue());
    const auto decoded = decodeObjects(5, payload);
    QVERIFY2(decoded.hasValue(), qPrintable(why(decoded)));
    QCOMPARE(*decoded, objects);

    const auto none = decodeObjects(0, encodeObjects({}));
    QVERIFY(none.hasValue());
    QVERIFY(none->isEmpty());
}

void tst_ItemCodec::qtSerializedObjectRoundTrip()
{
    // The intended use: an object serialized with QDataStream, carried opaque.
    QVariantMap map{{QStringLiteral("rank"), 3}, {QStringLiteral("name"), QStringLiteral("node-3")}};
    QByteArray blob;
    {
        QDataStream out(&blob, QIODevice::WriteOnly);
        out << map;
    }
    const auto decoded = decodeObjects(1, encodeObjects({blob}));
    QVERIFY(decoded.hasValue());
    QVariantMap back;
    QDataStream in(decoded->at(0));
    in >> back;
    QCOMPARE(back, map);
}

void tst_ItemCodec::malformedObjectsRejected_data()
{
    QTest::addColumn<quint32>("count");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QString>("messagePart");

    const QByteArray two = encodeObjects({QByteArray("ab"), QByteArray("cde")});
    QTest::newRow("length prefix cut") << 1u << bytes({0, 0}) << QStringLiteral("no room for its length");
    QTest::newRow("record cut") << 2u << two.left(two.size() - 1) << QStringLiteral("claims 3 bytes but only 2 remain");
    QTest::newRow("trailing bytes") << 2u << two + "z" << QStringLiteral("end at byte 13 but the payload has 14");
    QTest::newRow("count too high") << 3u << two << QStringLiteral("object record 3 of 3");
    QTest::newRow("count too low") << 1u << two << QStringLiteral("end at byte 6");
    QTest::newRow("huge length") << 1u << bytes({0xFF, 0xFF, 0xFF, 0xFF, 1}) << QStringLiteral("claims 4294967295 bytes");
    QTest::newRow("huge count") << 0xFFFFFFFFu << two << QStringLiteral("of 4294967295");
    QTest::newRow("records but count 0") << 0u << two << QStringLiteral("0 object records end at byte 0");
}

void tst_ItemCodec::malformedObjectsRejected()
{
    QFETCH(quint32, count);
    QFETCH(QByteArray, payload);
    QFETCH(QString, messagePart);

    const auto decoded = decodeObjects(count, payload);
    QVERIFY(!decoded.hasValue());
    QCOMPARE(decoded.error().code, ErrorCode::CountMismatch);
    QVERIFY2(decoded.error().message.contains(messagePart), qPrintable(decoded.error().message));
    QCOMPARE(validatePayload(ItemType::Object, count, payload).error(), decoded.error());
}

void tst_ItemCodec::validatePayloadRules()
{
    QVERIFY(validatePayload(ItemType::None, 0, QByteArray()).hasValue());
    QCOMPARE(validatePayload(ItemType::None, 1, QByteArray()).error().code, ErrorCode::CountMismatch);
    QCOMPARE(validatePayload(ItemType::None, 0, QByteArray("x")).error().code, ErrorCode::CountMismatch);
    QVERIFY(validatePayload(ItemType::Double, 2, QByteArray(16, '\0')).hasValue());
    QCOMPARE(validatePayload(ItemType::Double, 2, QByteArray(15, '\0')).error().code, ErrorCode::CountMismatch);
    QCOMPARE(validatePayload(ItemType(14), 0, QByteArray()).error().code, ErrorCode::BadItemType);
}

QTEST_APPLESS_MAIN(tst_ItemCodec)
#include "tst_itemcodec.moc"
