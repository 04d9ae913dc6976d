// The record layer of sealed links (RecordCipher, docs/design/protocol.md
// "Sealed records"): the record format against known answers computed
// outside MMPI (tests/wire/sealing_vectors.py), and every way a record can be
// wrong: altered anywhere, replayed, reordered, one dropped, sealed with
// another key or for the other direction, malformed, or not sealed at all.
#include <mmpi/wire/framedecoder.h>
#include <mmpi/wire/recordcipher.h>

#include <QTest>

using namespace mmpi;

namespace {

using Direction = RecordCipher::Direction;

QByteArray testKey(char offset = 0)
{
    QByteArray key(RecordCipher::KeySize, Qt::Uninitialized);
    for (int i = 0; i < key.size(); ++i)
        key[i] = char(i + offset);
    return key;
}

RecordCipher cipher(Direction direction = Direction::ConnectorToAcceptor, const QByteArray &key = testKey())
{
    auto made = RecordCipher::create(key, direction);
    if (!made)
        qFatal("cannot make a record cipher: %s", qPrintable(made.error().toString()));
    return std::move(*made);
}

// The frame of the known answers: Data, 5 bytes "hello", tag 7, rank 1 to 0.
Frame hello()
{
    Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, 5, QByteArrayLiteral("hello"));
    frame.header.source = 1;
    frame.header.destination = 0;
    frame.header.tag = 7;
    frame.header.sequence = 1;
    return frame;
}

Frame numbered(int n)
{
    Frame frame = makeFrame(FrameKind::Data, ItemType::Int, 1, QByteArray(4, char(n)));
    frame.header.sequence = quint64(n);
    return frame;
}

// Seals `count` numbered frames.
QList<Frame> sealMany(RecordCipher &sender, int count)
{
    QList<Frame> records;
    for (int n = 1; n <= count; ++n) {
        auto record = sender.seal(numbered(n));
        if (!record)
            qFatal("sealing failed: %s", qPrintable(record.error().toString()));
        records.append(*record);
    }
    return records;
}

} // namespace

class TestRecordCipher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recordMatchesKnownAnswer();
    void otherDirectionMatchesKnownAnswer();
    void recordsOpenInOrder();
    void largeAndEmptyFramesRoundTrip();
    void everyAlteredBitIsRefused();
    void replayedRecordIsRefused();
    void reorderedRecordsAreRefused();
    void droppedRecordIsRefused();
    void otherKeyOrDirectionIsRefused();
    void unsealedOrMalformedRecordIsRefused();
    void refusedCipherStaysFailed();
    void badKeySizeIsAnError();
    void sealedFramePassesTheFrameDecoder();
};

// The bytes of tests/wire/sealing_vectors.py: the outer header is the
// authenticated data, the nonce direction 1 then sequence 1.
void TestRecordCipher::recordMatchesKnownAnswer()
{
    RecordCipher sender = cipher();
    auto record = sender.seal(hello());
    QVERIFY(record.hasValue());
    QCOMPARE(encodeHeader(record->header).toHex(),
             QByteArrayLiteral("4d4d50490107020000000000ffffffffffffffffffffffff00000000000000410000000000000001"
                               "00000041"));
    QCOMPARE(record->payload.toHex(),
             QByteArrayLiteral("e65a9487cfdfe1dbea371fbdebc338c6714dfc031021ea0c735256416035ed3f0af9e1db9ca5c91f"
                               "fc23dacb492aac022d9e532a86868c884deb6534786c3ae3d2"));
    QCOMPARE(record->payload.size(), hello().payload.size() + RecordCipher::Overhead);
    QCOMPARE(RecordCipher::nonceFor(Direction::ConnectorToAcceptor, 1).toHex(),
             QByteArrayLiteral("000000010000000000000001"));
}

void TestRecordCipher::otherDirectionMatchesKnownAnswer()
{
    RecordCipher sender = cipher(Direction::AcceptorToConnector);
    QVERIFY(sender.seal(numbered(9)).hasValue()); // record 1
    auto record = sender.seal(hello());
    QVERIFY(record.hasValue());
    QCOMPARE(record->header.sequence, 2u);
    QCOMPARE(record->payload.toHex(),
             QByteArrayLiteral("3cb8724e7a9bb5445d640305cad58c0e86ae99b5c4bcebbb5e4c37c443ee88ad0e8fc171133939"
                               "659d511e4bcccf877fc6cf597408b09c6eb6922f750375123885"));
}

void TestRecordCipher::recordsOpenInOrder()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    const QList<Frame> records = sealMany(sender, 5);
    for (int n = 1; n <= 5; ++n) {
        QCOMPARE(records.at(n - 1).header.sequence, quint64(n));
        auto frame = receiver.open(records.at(n - 1));
        if (!frame)
            QFAIL(qPrintable(frame.error().toString()));
        QCOMPARE(*frame, numbered(n));
    }
    QCOMPARE(receiver.nextSequence(), 6u);
}

void TestRecordCipher::largeAndEmptyFramesRoundTrip()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    QByteArray big(3 * 1024 * 1024 + 7, Qt::Uninitialized);
    for (qsizetype i = 0; i < big.size(); ++i)
        big[i] = char(i * 13);
    const QList<Frame> frames{makeFrame(FrameKind::Data, ItemType::Byte, quint32(big.size()), big),
                              makeFrame(FrameKind::Heartbeat, ItemType::None, 0, {})};
    for (const Frame &frame : frames) {
        auto record = sender.seal(frame);
        QVERIFY(record.hasValue());
        auto opened = receiver.open(*record);
        if (!opened)
            QFAIL(qPrintable(opened.error().toString()));
        QCOMPARE(*opened, frame);
    }
}

// A bit flipped anywhere, outer header (but its length) or payload, is refused.
void TestRecordCipher::everyAlteredBitIsRefused()
{
    RecordCipher sender = cipher();
    auto record = sender.seal(hello());
    QVERIFY(record.hasValue());
    const QByteArray wire = encodeFrame(*record);
    for (qsizetype byte = 0; byte < wire.size(); ++byte) {
        if (byte >= 40 && byte < FrameHeaderSize)
            continue; // the length: a transport would wait for more, or split records elsewhere
        QByteArray altered = wire;
        altered[byte] = char(altered[byte] ^ (1 << (byte % 8)));
        FrameDecoder decoder;
        QVERIFY(decoder.feed(altered).hasValue());
        auto decoded = decoder.next();
        if (!decoded || !decoded->has_value())
            continue; // refused already by the frame decoder (magic, version, kind, type)
        RecordCipher receiver = cipher();
        auto opened = receiver.open(**decoded);
        QVERIFY2(!opened.hasValue(), qPrintable(QStringLiteral("byte %1 altered, yet opened").arg(byte)));
        QCOMPARE(opened.error().code, ErrorCode::RecordRefused);
    }
    RecordCipher receiver = cipher();
    Frame flipped = *record;
    flipped.payload[10] = char(flipped.payload[10] ^ 0x01);
    const auto opened = receiver.open(flipped);
    QVERIFY(!opened.hasValue());
    QVERIFY2(opened.error().message.contains(QLatin1String("failed authentication")),
             qPrintable(opened.error().message));
}

void TestRecordCipher::replayedRecordIsRefused()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    const QList<Frame> records = sealMany(sender, 2);
    QVERIFY(receiver.open(records.at(0)).hasValue());
    const auto replayed = receiver.open(records.at(0));
    QVERIFY(!replayed.hasValue());
    QCOMPARE(replayed.error().code, ErrorCode::RecordRefused);
    QCOMPARE(replayed.error().message,
             QStringLiteral("sealed record 1 arrived where record 2 was due: it was replayed or reordered, or "
                            "one before it was dropped"));
}

void TestRecordCipher::reorderedRecordsAreRefused()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    const QList<Frame> records = sealMany(sender, 2);
    const auto second = receiver.open(records.at(1));
    QVERIFY(!second.hasValue());
    QCOMPARE(second.error().code, ErrorCode::RecordRefused);
    QVERIFY(second.error().message.startsWith(QLatin1String("sealed record 2 arrived where record 1 was due")));
    // A record whose number was rewritten to look due fails its tag instead.
    RecordCipher fresh = cipher();
    Frame renumbered = records.at(1);
    renumbered.header.sequence = 1;
    const auto opened = fresh.open(renumbered);
    QVERIFY(!opened.hasValue());
    QVERIFY(opened.error().message.contains(QLatin1String("failed authentication")));
}

void TestRecordCipher::droppedRecordIsRefused()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    const QList<Frame> records = sealMany(sender, 3);
    QVERIFY(receiver.open(records.at(0)).hasValue());
    const auto third = receiver.open(records.at(2));
    QVERIFY(!third.hasValue());
    QCOMPARE(third.error().code, ErrorCode::RecordRefused);
    QVERIFY(third.error().message.startsWith(QLatin1String("sealed record 3 arrived where record 2 was due")));
}

void TestRecordCipher::otherKeyOrDirectionIsRefused()
{
    RecordCipher sender = cipher();
    auto record = sender.seal(hello());
    QVERIFY(record.hasValue());
    RecordCipher otherKey = cipher(Direction::ConnectorToAcceptor, testKey(1));
    RecordCipher otherDirection = cipher(Direction::AcceptorToConnector);
    for (RecordCipher *receiver : {&otherKey, &otherDirection}) {
        const auto opened = receiver->open(*record);
        QVERIFY(!opened.hasValue());
        QCOMPARE(opened.error().code, ErrorCode::RecordRefused);
        QVERIFY(opened.error().message.contains(QLatin1String("failed authentication")));
    }
}

void TestRecordCipher::unsealedOrMalformedRecordIsRefused()
{
    RecordCipher receiver = cipher();
    const auto plain = receiver.open(hello());
    QVERIFY(!plain.hasValue());
    QCOMPARE(plain.error().code, ErrorCode::RecordRefused);
    QCOMPARE(plain.error().message, QStringLiteral("an unsealed frame (kind 1) arrived on a sealed link"));

    Frame shortRecord;
    shortRecord.header = RecordCipher::recordHeader(1, 10);
    shortRecord.payload = QByteArray(10, 'x');
    RecordCipher other = cipher();
    const auto tooShort = other.open(shortRecord);
    QVERIFY(!tooShort.hasValue());
    QCOMPARE(tooShort.error().code, ErrorCode::RecordRefused);
    QVERIFY(tooShort.error().message.startsWith(QLatin1String("malformed sealed record")));
}

void TestRecordCipher::refusedCipherStaysFailed()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    const QList<Frame> records = sealMany(sender, 2);
    QVERIFY(!receiver.open(records.at(1)).hasValue());
    const auto after = receiver.open(records.at(0));
    QVERIFY(!after.hasValue());
    QCOMPARE(after.error().code, ErrorCode::RecordRefused);
}

void TestRecordCipher::badKeySizeIsAnError()
{
    const auto made = RecordCipher::create(QByteArray(16, 'k'), Direction::ConnectorToAcceptor);
    QVERIFY(!made.hasValue());
    QCOMPARE(made.error().code, ErrorCode::CryptoFailed);
}

// The record is an ordinary frame on the wire: every transport's decoder takes it.
void TestRecordCipher::sealedFramePassesTheFrameDecoder()
{
    RecordCipher sender = cipher();
    RecordCipher receiver = cipher();
    auto record = sender.seal(hello());
    QVERIFY(record.hasValue());
    FrameDecoder decoder;
    QVERIFY(decoder.feed(encodeFrame(*record)).hasValue());
    auto decoded = decoder.next();
    QVERIFY(decoded.hasValue() && decoded->has_value());
    QCOMPARE((*decoded)->header.kind, FrameKind::Sealed);
    auto opened = receiver.open(**decoded);
    QVERIFY(opened.hasValue());
    QCOMPARE(*opened, hello());
}

QTEST_GUILESS_MAIN(TestRecordCipher)
#include "tst_recordcipher.moc"
