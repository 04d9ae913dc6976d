// tst_mpcodec: the edu.rit.mp wire codec against byte vectors derived by hand
// from the rules (docs/design/protocol.md, "edu.rit.mp compatibility"): every type
// code both ways, PJ's send aliasing, the strict incremental decoder in every
// split (a real Java serialization stream too), and its errors for bad magic,
// unknown codes, bad N and truncation.
#include "mpvectors.h"

#include <mmpi/mp/codec.h>
#include <mmpi/mp/decoder.h>

#include <QRandomGenerator>
#include <QTest>

using namespace mmpi;
using namespace mmpi::mp;
using namespace mpvectors;

namespace {

template<Primitive T>
QByteArray encoded(qint32 tag, const QList<T> &values, ItemType as = ItemTraits<T>::type)
{
    auto message = makeMessage<T>(tag, std::span<const T>(values.constData(), values.size()), as);
    if (!message)
        return "error: " + message.error().toString().toUtf8();
    auto bytes = encodeMessage(*message);
    return bytes ? *bytes : "error: " + bytes.error().toString().toUtf8();
}

QList<Message> decodeAll(const QByteArray &stream, qsizetype maxPiece, quint32 seed)
{
    Decoder decoder;
    QRandomGenerator random(seed);
    QList<Message> messages;
    for (qsizetype at = 0; at < stream.size();) {
        const qsizetype piece = qMin<qsizetype>(1 + random.bounded(int(maxPiece)), stream.size() - at);
        if (!decoder.feed(QByteArrayView(stream).sliced(at, piece)))
            return {};
        at += piece;
        while (auto message = decoder.next())
            messages.append(*message);
    }
    if (!decoder.finish())
        return {};
    return messages;
}

QByteArray allVectors()
{
    return boolMsg() + byteMsg() + signed8Msg() + unsigned8Msg() + shortMsg() + signed16Msg() + unsigned16Msg()
        + intMsg() + longMsg() + charMsg() + floatMsg() + doubleMsg() + emptyIntMsg() + code2Msg() + code12Msg()
        + code13Msg() + objectMsg();
}

} // namespace

class TestMpCodec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void magicIsPjs()
    {
        QCOMPARE(Magic, 30144596u);
        QCOMPARE(hex(magic), hex("01cbf854"));
    }

    void encodeEveryType()
    {
        QCOMPARE(encoded<bool>(7, {true, false, true}), boolMsg());
        QCOMPARE(encoded<qint8>(7, {-1, 127}), byteMsg());
        QCOMPARE(encoded<qint8>(7, {-128, 5}, ItemType::SignedByte), signed8Msg());
        QCOMPARE(encoded<quint8>(7, {255, 0}), unsigned8Msg());
        QCOMPARE(encoded<qint16>(7, {-2, 258}), shortMsg());
        QCOMPARE(encoded<qint16>(7, {-32768}, ItemType::SignedShort), signed16Msg());
        QCOMPARE(encoded<quint16>(7, {65535, 1}), unsigned16Msg());
        QCOMPARE(encoded<qint32>(7, {1, -1}), intMsg());
        QCOMPARE(encoded<qint64>(7, {0x0102030405060708LL}), longMsg());
        QCOMPARE(encoded<char16_t>(7, {u'A', char16_t(0x20ac)}), charMsg());
        QCOMPARE(encoded<float>(7, {1.0f, -2.5f}), floatMsg());
        QCOMPARE(encoded<double>(-2, {1.0, -0.5}), doubleMsg());
        QCOMPARE(encoded<qint32>(0, {}), emptyIntMsg());
    }

    void pjSendAliasing()
    {
        QCOMPARE(sendCode(ItemType::Boolean), std::optional<quint8>(1));
        QCOMPARE(sendCode(ItemType::Byte), std::optional<quint8>(1));
        QCOMPARE(sendCode(ItemType::UnsignedByte), std::optional<quint8>(10));
        QCOMPARE(sendCode(ItemType::UnsignedShort), std::optional<quint8>(11));
        QCOMPARE(sendCode(ItemType::SignedByte), std::optional<quint8>(10));
        QCOMPARE(sendCode(ItemType::SignedShort), std::optional<quint8>(11));
        QCOMPARE(sendCode(ItemType::Short), std::optional<quint8>(3));
        QVERIFY(!sendCode(ItemType::Object));
    }

    void refusesWrongSendTypes()
    {
        QVERIFY(encoded<quint8>(7, {1}, ItemType::Byte).startsWith("error: TypeMismatch"));
        QVERIFY(encoded<qint32>(7, {1}, ItemType::Float).startsWith("error: TypeMismatch"));
        QVERIFY(encoded<qint8>(7, {1}, ItemType::Object).startsWith("error: TypeMismatch"));
        QCOMPARE(encodeMessage(Message{0, 14, 0, {}}).error().code, ErrorCode::BadItemType);
        QCOMPARE(encodeMessage(Message{0, 4, -1, {}}).error().code, ErrorCode::BadHeader);
        QCOMPARE(encodeMessage(Message{0, 4, 2, QByteArray(7, 0)}).error().code, ErrorCode::CountMismatch);
    }

    void decodeEveryType()
    {
        const QList<Message> messages = decodeAll(allVectors(), 1 << 20, 1);
        QCOMPARE(messages.size(), 17);
        QCOMPARE(messages[0].tag, 7);
        QCOMPARE(messages[0].typeCode, quint8(1));
        QCOMPARE(*decodeValues<bool>(messages[0]), (QList<bool>{true, false, true}));
        QCOMPARE(*decodeValues<qint8>(messages[1]), (QList<qint8>{-1, 127}));
        QCOMPARE(*decodeValues<qint8>(messages[2]), (QList<qint8>{-128, 5}));
        QCOMPARE(*decodeValues<quint8>(messages[3]), (QList<quint8>{255, 0}));
        QCOMPARE(*decodeValues<qint16>(messages[4]), (QList<qint16>{-2, 258}));
        QCOMPARE(*decodeValues<qint16>(messages[5]), (QList<qint16>{-32768}));
        QCOMPARE(*decodeValues<quint16>(messages[6]), (QList<quint16>{65535, 1}));
        QCOMPARE(*decodeValues<qint32>(messages[7]), (QList<qint32>{1, -1}));
        QCOMPARE(*decodeValues<qint64>(messages[8]), (QList<qint64>{0x0102030405060708LL}));
        QCOMPARE(*decodeValues<char16_t>(messages[9]), (QList<char16_t>{u'A', char16_t(0x20ac)}));
        QCOMPARE(*decodeValues<float>(messages[10]), (QList<float>{1.0f, -2.5f}));
        QCOMPARE(messages[11].tag, -2);
        QCOMPARE(*decodeValues<double>(messages[11]), (QList<double>{1.0, -0.5}));
        QCOMPARE(messages[12], (Message{0, 4, 0, {}}));
        // Codes PJ never sends are accepted all the same.
        QCOMPARE(messages[13].typeCode, quint8(2));
        QCOMPARE(*decodeValues<qint8>(messages[13]), (QList<qint8>{-1, 1}));
        QCOMPARE(messages[14].typeCode, quint8(12));
        QCOMPARE(*decodeValues<quint8>(messages[14]), (QList<quint8>{255, 128}));
        QCOMPARE(messages[15].typeCode, quint8(13));
        QCOMPARE(*decodeValues<quint16>(messages[15]), (QList<quint16>{65534}));
        // An object stream is N opaque bytes.
        QVERIFY(messages[16].isObject());
        QCOMPARE(messages[16].count, 6);
        QCOMPARE(messages[16].items, hex("aced0005 7704"));
        QCOMPARE(decodeValues<qint8>(messages[16]).error().code, ErrorCode::TypeMismatch);
    }

    void decodeTypeRules()
    {
        // Bytes PJ sent with code 1 read as any 8-bit type; Int never as float.
        QCOMPARE(*decodeValues<quint8>(1, 2, hex("ff7f")), (QList<quint8>{255, 127}));
        QCOMPARE(*decodeValues<qint16>(13, 1, hex("fffe")), (QList<qint16>{-2}));
        QCOMPARE(decodeValues<float>(4, 1, hex("3f800000")).error().code, ErrorCode::TypeMismatch);
        QCOMPARE(decodeValues<qint32>(3, 1, hex("0001")).error().code, ErrorCode::TypeMismatch);
        QCOMPARE(decodeValues<qint32>(4, 2, hex("00000001")).error().code, ErrorCode::CountMismatch);
    }

    void decodeInEverySplit()
    {
        const QByteArray stream = allVectors();
        const QList<Message> whole = decodeAll(stream, stream.size(), 1);
        QCOMPARE(whole.size(), 17);
        QCOMPARE(decodeAll(stream, 1, 1), whole); // one byte at a time
        for (quint32 seed = 1; seed <= 50; ++seed)
            QCOMPARE(decodeAll(stream, 20, seed), whole);
    }

    void javaObjectStreamIsCarriedWhole()
    {
        // 205 bytes of ObjectOutputStream output holding the magic number: N
        // bytes are counted, the magic inside is just data.
        const QByteArray stream = javaObjectStream();
        QCOMPARE(stream.size(), 205);
        QVERIFY(stream.contains(hex("01cbf854")));
        const QByteArray bytes = javaObjectMsg() + intMsg();
        const QList<Message> whole = decodeAll(bytes, bytes.size(), 1);
        QCOMPARE(whole.size(), 2);
        QCOMPARE(whole[0], (Message{11, 9, 205, stream}));
        QCOMPARE(*decodeValues<qint32>(whole[1]), (QList<qint32>{1, -1}));
        for (quint32 seed = 1; seed <= 20; ++seed)
            QCOMPARE(decodeAll(bytes, 16, seed), whole);
        QCOMPARE(*encodeMessage(whole[0]), javaObjectMsg());
    }

    void badMagicFailsAtItsFourthByte()
    {
        Decoder decoder;
        QVERIFY(decoder.feed(hex("01cbf8")));
        const auto fed = decoder.feed(hex("55"));
        QVERIFY(!fed);
        QCOMPARE(fed.error().code, ErrorCode::BadMagic);
        QVERIFY(fed.error().message.contains(QStringLiteral("01cbf855")));
        QVERIFY(decoder.hasFailed());
        // Stays failed: the stream cannot be resynchronised.
        QCOMPARE(decoder.feed(intMsg()).error().code, ErrorCode::BadMagic);
        QVERIFY(!decoder.next());
    }

    void badMagicAfterGoodMessage()
    {
        Decoder decoder;
        const auto fed = decoder.feed(intMsg() + hex("deadbeef"));
        QCOMPARE(fed.error().code, ErrorCode::BadMagic);
        QVERIFY(decoder.next()); // the message before the garbage was complete
    }

    void unknownTypeCode_data()
    {
        QTest::addColumn<QByteArray>("code");
        QTest::newRow("0") << hex("00");
        QTest::newRow("14") << hex("0e");
        QTest::newRow("255") << hex("ff");
    }
    void unknownTypeCode()
    {
        QFETCH(QByteArray, code);
        Decoder decoder;
        // Refused as soon as the code byte is in, before N.
        const auto fed = decoder.feed(hex("01cbf854 00000000") + code);
        QCOMPARE(fed.error().code, ErrorCode::BadItemType);
        QVERIFY(fed.error().message.contains(QString::number(quint8(code[0]))));
    }

    void negativeCount()
    {
        Decoder decoder;
        const auto fed = decoder.feed(hex("01cbf854 00000000 04 ffffffff"));
        QCOMPARE(fed.error().code, ErrorCode::BadHeader);
        QVERIFY(fed.error().message.contains(QStringLiteral("-1")));
    }

    void absurdCountIsBoundedBeforeAllocation()
    {
        Decoder decoder(1024 * 1024);
        // 2^31-1 doubles would be 16 GiB.
        const auto fed = decoder.feed(hex("01cbf854 00000000 08 7fffffff"));
        QCOMPARE(fed.error().code, ErrorCode::FrameTooLarge);
        QVERIFY(fed.error().message.contains(QStringLiteral("1048576")));
        // Exactly at the limit is fine; one more item is not.
        Decoder atLimit(8);
        QVERIFY(atLimit.feed(hex("01cbf854 00000000 08 00000001 3ff0000000000000")));
        QVERIFY(atLimit.next());
        QCOMPARE(atLimit.feed(hex("01cbf854 00000000 08 00000002")).error().code, ErrorCode::FrameTooLarge);
        // Object N counts bytes.
        Decoder objects(5);
        QCOMPARE(objects.feed(hex("01cbf854 00000000 09 00000006")).error().code, ErrorCode::FrameTooLarge);
    }

    void truncatedAtEof()
    {
        Decoder inItems;
        QVERIFY(inItems.feed(intMsg().chopped(3)));
        QVERIFY(!inItems.atBoundary());
        const auto items = inItems.finish();
        QCOMPARE(items.error().code, ErrorCode::TruncatedPayload);
        QVERIFY(items.error().message.contains(QStringLiteral("5 of 8 item bytes")));

        Decoder inHeader;
        QVERIFY(inHeader.feed(intMsg().first(6)));
        const auto header = inHeader.finish();
        QCOMPARE(header.error().code, ErrorCode::TruncatedPayload);
        QVERIFY(header.error().message.contains(QStringLiteral("6 of the 13 header bytes")));

        Decoder clean;
        QVERIFY(clean.feed(intMsg() + emptyIntMsg()));
        QVERIFY(clean.atBoundary());
        QVERIFY(clean.finish());
        QCOMPARE(clean.readyCount(), 2);
    }
};

QTEST_GUILESS_MAIN(TestMpCodec)
#include "tst_mpcodec.moc"
