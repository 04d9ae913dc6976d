// JoinCode: its text reads back to the same code (however a person types
// it), every malformed or mistyped text is BadJoinCode with its reason, the
// world key depends on the secret and the world name only, and the QR image
// holds exactly the modules libqrencode makes for the code's text.
#include <mmpi/world/joincode.h>

#include <QTest>

#include <qrencode.h>

#include <memory>

using namespace mmpi;

namespace {

// Why a result failed, or nothing (QVERIFY2 evaluates its message always).
template<typename T>
QByteArray whyNot(const mmpi::Result<T> &result)
{
    return result ? QByteArray() : result.error().toString().toUtf8();
}

const QByteArray Secret = QByteArray::fromHex("0123456789ab");

JoinCode sample(int addresses = 1)
{
    QList<QHostAddress> list;
    for (int i = 0; i < addresses; ++i)
        list << QHostAddress(QStringLiteral("192.168.%1.23").arg(i + 1));
    auto code = JoinCode::create(list, 47474, Secret);
    return code ? *code : JoinCode();
}

} // namespace

class tst_JoinCode : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTrips();
    void spellsTheDocumentedBytes();
    void readsWhatAPersonTypes();
    void refusesMalformed_data();
    void refusesMalformed();
    void everyMistypedCharacterIsCaught();
    void createRefusesBadFields();
    void worldKey();
    void generateMakesFreshSecrets();
    void qrImageHoldsTheCode();
};

void tst_JoinCode::roundTrips()
{
    for (int n = 1; n <= JoinCode::MaxAddresses; ++n) {
        const JoinCode code = sample(n);
        QVERIFY(code.isValid());
        const QString text = code.toString();
        // 11 + 4n bytes in 5-bit characters, in groups of four.
        const int symbols = ((11 + 4 * n) * 8 + 4) / 5;
        QCOMPARE(text.size(), symbols + (symbols - 1) / 4);
        const auto parsed = JoinCode::parse(text);
        QVERIFY2(parsed, whyNot(parsed).constData());
        QCOMPARE(*parsed, code);
        QCOMPARE(parsed->beaconPort(), quint16(47474));
        QCOMPARE(parsed->secret(), Secret);
    }
    QCOMPARE(sample(2).beaconContacts(),
             (QStringList{QStringLiteral("tcp://192.168.1.23:47474"), QStringLiteral("tcp://192.168.2.23:47474")}));
}

void tst_JoinCode::spellsTheDocumentedBytes()
{
    // docs/design/formation.md, "Join codes": 01 | 0123456789ab | b972 (47474)
    // | c0a80117 (192.168.1.23) | f9ff, the CRC-16/X.25 of the bytes before.
    QCOMPARE(sample().toString(), QStringLiteral("040J-6HB7-H6NV-JWP0-N00H-FYFZ"));
}

void tst_JoinCode::readsWhatAPersonTypes()
{
    const JoinCode code = sample();
    QString typed = code.toString().toLower().remove(u'-');
    typed.insert(5, u' ');
    // O, I and L stand for 0, 1 and 1, as Crockford's base32 reads them.
    typed.replace(u'0', u'o').replace(u'1', u'l');
    const auto parsed = JoinCode::parse(typed);
    QVERIFY2(parsed, whyNot(parsed).constData());
    QCOMPARE(*parsed, code);
}

void tst_JoinCode::refusesMalformed_data()
{
    // Two addresses: 19 bytes in 31 characters, the last with 3 bits of padding.
    const QString good = sample(2).toString();
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << QString() << "0 characters is not the length of a code";
    QTest::newRow("U") << (good.left(3) + u'U' + good.mid(4)) << "'U' at position 4";
    QTest::newRow("punctuation") << (good + u'!') << "'!' at position";
    QTest::newRow("too long") << QString(65, u'A') << "more than 64";
    QTest::newRow("one short") << good.chopped(1) << "cannot end a code";
    QTest::newRow("one more") << (good + u'0') << "is not the length of a code";
    QTest::newRow("3 bytes more") << (good + QStringLiteral("00000")) << "is not the length";
    // The padding bits must be 0, so that a code has one spelling.
    QString padded = good;
    padded[padded.size() - 1] = QLatin1Char("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[
        (QByteArrayView("0123456789ABCDEFGHJKMNPQRSTVWXYZ").indexOf(char(good.back().unicode())) ^ 1)]);
    QTest::newRow("padding") << padded << "cannot end a code";
}

void tst_JoinCode::refusesMalformed()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    const auto parsed = JoinCode::parse(text);
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code, ErrorCode::BadJoinCode);
    QVERIFY2(parsed.error().message.contains(reason), qPrintable(parsed.error().message));
}

void tst_JoinCode::everyMistypedCharacterIsCaught()
{
    // Given a code, when any one character is replaced by any other, then the
    // code is refused (a CRC-16 catches every error of up to 16 bits), never
    // read as another world's.
    const QString good = sample(2).toString();
    const QString alphabet = QStringLiteral("0123456789ABCDEFGHJKMNPQRSTVWXYZ");
    int tried = 0;
    for (qsizetype i = 0; i + 1 < good.size(); ++i) { // the last one also holds padding
        if (good.at(i) == u'-')
            continue;
        for (const QChar c : alphabet) {
            if (c == good.at(i))
                continue;
            QString typo = good;
            typo[i] = c;
            const auto parsed = JoinCode::parse(typo);
            QVERIFY2(!parsed, qPrintable(typo));
            QCOMPARE(parsed.error().code, ErrorCode::BadJoinCode);
            ++tried;
        }
    }
    QVERIFY(tried > 500);
}

void tst_JoinCode::createRefusesBadFields()
{
    const QHostAddress ok(QStringLiteral("10.0.0.1"));
    QCOMPARE(JoinCode::create({}, 1, Secret).error().code, ErrorCode::BadJoinCode);
    QCOMPARE(JoinCode::create({ok}, 0, Secret).error().code, ErrorCode::BadJoinCode);
    QCOMPARE(JoinCode::create({ok}, 1, Secret.first(5)).error().code, ErrorCode::BadJoinCode);
    QCOMPARE(JoinCode::create({ok, ok}, 1, Secret).error().code, ErrorCode::BadJoinCode);
    QCOMPARE(JoinCode::create({QHostAddress(QStringLiteral("fd00::1"))}, 1, Secret).error().code,
             ErrorCode::BadJoinCode);
    QCOMPARE(JoinCode::create({QHostAddress(QStringLiteral("224.0.0.251"))}, 1, Secret).error().code,
             ErrorCode::BadJoinCode);
    QList<QHostAddress> five;
    for (int i = 1; i <= 5; ++i)
        five << QHostAddress(QStringLiteral("10.0.0.%1").arg(i));
    QCOMPARE(JoinCode::create(five, 1, Secret).error().code, ErrorCode::BadJoinCode);
    QVERIFY(JoinCode().toString().isEmpty());
    QVERIFY(JoinCode().toQrImage().isNull());
}

void tst_JoinCode::worldKey()
{
    const JoinCode code = sample();
    const QByteArray key = code.worldKey(QStringLiteral("lobby"));
    QCOMPARE(key.size(), 32);
    // The same on every node that holds the code ...
    QCOMPARE(JoinCode::parse(code.toString())->worldKey(QStringLiteral("lobby")), key);
    // ... whatever the addresses, but another for another world or secret.
    QCOMPARE(JoinCode::create({QHostAddress(QStringLiteral("10.9.9.9"))}, 1, Secret)->worldKey(QStringLiteral("lobby")),
             key);
    QVERIFY(code.worldKey(QStringLiteral("lobby2")) != key);
    QVERIFY(JoinCode::create(code.addresses(), 47474, QByteArray::fromHex("0123456789aa"))
                ->worldKey(QStringLiteral("lobby")) != key);
}

void tst_JoinCode::generateMakesFreshSecrets()
{
    const auto a = JoinCode::generate({QHostAddress(QStringLiteral("10.0.0.1"))}, 47474);
    const auto b = JoinCode::generate({QHostAddress(QStringLiteral("10.0.0.1"))}, 47474);
    QVERIFY(a && b);
    QCOMPARE(a->secret().size(), JoinCode::SecretSize);
    QVERIFY(a->secret() != b->secret());
}

void tst_JoinCode::qrImageHoldsTheCode()
{
    const JoinCode code = sample(2);
    const QByteArray text = code.toString().toLatin1();
    // What libqrencode makes of the text, read back module by module.
    const std::unique_ptr<QRcode, decltype(&QRcode_free)> qr(
        QRcode_encodeString(text.constData(), 0, QR_ECLEVEL_M, QR_MODE_8, 1), &QRcode_free);
    QVERIFY(qr);
    // 31 characters in alphanumeric mode fit a version-2 symbol at level M;
    // 8-bit mode would need version 3: the mode is the dense one.
    QCOMPARE(qr->version, 2);
    QCOMPARE(qr->width, 25);
    const int module = 5;
    const QImage image = code.toQrImage(module);
    QCOMPARE(image.size(), QSize((25 + 8) * module, (25 + 8) * module));
    for (int y = -4; y < 25 + 4; ++y) {
        for (int x = -4; x < 25 + 4; ++x) {
            const bool inside = x >= 0 && y >= 0 && x < 25 && y < 25;
            const bool dark = inside && (qr->data[y * 25 + x] & 1);
            // Every pixel of the module, corners and centre alike.
            for (const QPoint d : {QPoint(0, 0), QPoint(module - 1, module - 1), QPoint(2, 2)}) {
                const QRgb pixel = image.pixel((x + 4) * module + d.x(), (y + 4) * module + d.y());
                QCOMPARE(qGray(pixel) < 128, dark);
            }
        }
    }
    QVERIFY(code.toQrImage(0).isNull());
}

QTEST_GUILESS_MAIN(tst_JoinCode)
#include "tst_joincode.moc"
