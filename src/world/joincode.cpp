#include <mmpi/world/joincode.h>

#include <mmpi/world/rootaddress.h>

#include <QPasswordDigestor>
#include <QRandomGenerator>
#include <QtEndian>

#include <qrencode.h>

#include <cstring>
#include <memory>

namespace mmpi {

namespace {

// Crockford's base32: digits and capitals without I, L, O and U, so that a
// code read aloud or off a screen has no look-alike characters.
constexpr char Alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr quint8 FormatVersion = 1;
// version, secret, port; then the addresses; then a CRC-16 over all before.
constexpr int HeadSize = 1 + JoinCode::SecretSize + 2;
constexpr int CheckSize = 2;
constexpr int GroupSize = 4;
// PBKDF2 rounds for the world key. A guess of the 48-bit secret then costs
// 100000 HMACs: 0.25 s once per node on this project's 2-core VM, and a
// GPU's century for the whole space (docs/design/formation.md, "Join codes").
constexpr int KeyIterations = 100000;

Error bad(const QString &reason)
{
    return Error(ErrorCode::BadJoinCode, QStringLiteral("not a valid join code: %1").arg(reason));
}

int symbolValue(QChar c)
{
    const char u = char(c.toUpper().unicode() < 128 ? c.toUpper().unicode() : 0);
    if (u == 'O')
        return 0;
    if (u == 'I' || u == 'L')
        return 1;
    const char *found = u ? std::strchr(Alphabet, u) : nullptr;
    return found ? int(found - Alphabet) : -1;
}

QString encodeBase32(const QByteArray &bytes)
{
    QString out;
    quint32 buffer = 0;
    int bits = 0;
    for (const char byte : bytes) {
        buffer = (buffer << 8) | quint8(byte);
        bits += 8;
        while (bits >= 5) {
            out += QLatin1Char(Alphabet[(buffer >> (bits - 5)) & 31]);
            bits -= 5;
        }
    }
    if (bits > 0)
        out += QLatin1Char(Alphabet[(buffer << (5 - bits)) & 31]);
    return out;
}

// The symbols' bits packed into bytes; the bits left over at the end must be
// zero, so that every code has exactly one spelling.
Result<QByteArray> decodeBase32(const QList<int> &symbols)
{
    QByteArray out;
    quint32 buffer = 0;
    int bits = 0;
    for (const int value : symbols) {
        buffer = (buffer << 5) | quint32(value);
        bits += 5;
        if (bits >= 8) {
            out.append(char((buffer >> (bits - 8)) & 0xFF));
            bits -= 8;
        }
    }
    if (bits >= 5 || (buffer & ((1u << bits) - 1)) != 0)
        return bad(QStringLiteral("%1 characters cannot end a code").arg(symbols.size()));
    return out;
}

quint16 checksum(QByteArrayView bytes)
{
    return qChecksum(bytes, Qt::ChecksumIso3309);
}

Result<void> checkFields(const QList<QHostAddress> &addresses, quint16 port, const QByteArray &secret)
{
    if (addresses.isEmpty() || addresses.size() > JoinCode::MaxAddresses)
        return bad(QStringLiteral("%1 addresses (1 to %2)").arg(addresses.size()).arg(JoinCode::MaxAddresses));
    for (qsizetype i = 0; i < addresses.size(); ++i) {
        const QHostAddress &a = addresses.at(i);
        if (a.protocol() != QAbstractSocket::IPv4Protocol || a.isMulticast() || a.isBroadcast()
            || a == QHostAddress(QHostAddress::AnyIPv4))
            return bad(QStringLiteral("'%1' is not a unicast IPv4 address").arg(a.toString()));
        if (addresses.indexOf(a) != i)
            return bad(QStringLiteral("address %1 is listed twice").arg(a.toString()));
    }
    if (port == 0)
        return bad(QStringLiteral("beacon port 0"));
    if (secret.size() != JoinCode::SecretSize)
        return bad(QStringLiteral("a secret of %1 bytes (%2 expected)").arg(secret.size()).arg(JoinCode::SecretSize));
    return success();
}

// The bytes the text spells: letters to values, then bits to bytes.
Result<QByteArray> bytesOf(const QString &text)
{
    if (text.size() > JoinCode::MaxTextSize)
        return bad(QStringLiteral("%1 characters, more than %2").arg(text.size()).arg(JoinCode::MaxTextSize));
    QList<int> symbols;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c == u'-' || c == u' ')
            continue;
        const int value = symbolValue(c);
        if (value < 0)
            return bad(QStringLiteral("'%1' at position %2 is not a letter or digit of a code").arg(c).arg(i + 1));
        symbols << value;
    }
    return decodeBase32(symbols);
}

} // namespace

Result<JoinCode> JoinCode::create(const QList<QHostAddress> &addresses, quint16 beaconPort,
                                  const QByteArray &secret)
{
    if (auto ok = checkFields(addresses, beaconPort, secret); !ok)
        return ok.error();
    JoinCode code;
    code.m_addresses = addresses;
    code.m_beaconPort = beaconPort;
    code.m_secret = secret;
    return code;
}

Result<JoinCode> JoinCode::generate(const QList<QHostAddress> &addresses, quint16 beaconPort)
{
    QByteArray secret(SecretSize, Qt::Uninitialized);
    QRandomGenerator::system()->generate(secret.begin(), secret.end());
    return create(addresses, beaconPort, secret);
}

QList<QHostAddress> JoinCode::codeAddresses(const QList<QHostAddress> &addresses)
{
    QList<QHostAddress> v4;
    for (const QHostAddress &address : addresses)
        if (address.protocol() == QAbstractSocket::IPv4Protocol && v4.size() < MaxAddresses)
            v4 << address;
    return v4;
}

Result<JoinCode> JoinCode::parse(const QString &text)
{
    auto bytes = bytesOf(text);
    if (!bytes)
        return bytes.error();
    const qsizetype size = bytes->size();
    const qsizetype addressBytes = size - HeadSize - CheckSize;
    if (addressBytes < 4 || addressBytes > 4 * MaxAddresses || addressBytes % 4 != 0)
        return bad(QStringLiteral("%1 characters is not the length of a code").arg(encodeBase32(*bytes).size()));
    const QByteArrayView view(*bytes);
    if (checksum(view.first(size - CheckSize)) != qFromBigEndian<quint16>(view.data() + size - CheckSize))
        return bad(QStringLiteral("the check characters do not match (a character is mistyped)"));
    if (quint8(view[0]) != FormatVersion)
        return bad(QStringLiteral("format %1 (this node reads %2)").arg(quint8(view[0])).arg(FormatVersion));
    QList<QHostAddress> addresses;
    for (qsizetype at = HeadSize; at < HeadSize + addressBytes; at += 4)
        addresses << QHostAddress(qFromBigEndian<quint32>(view.data() + at));
    const quint16 port = qFromBigEndian<quint16>(view.data() + 1 + SecretSize);
    return create(addresses, port, bytes->mid(1, SecretSize));
}

QString JoinCode::toString() const
{
    if (!isValid())
        return {};
    QByteArray bytes;
    bytes.append(char(FormatVersion)).append(m_secret);
    char word[4];
    qToBigEndian<quint16>(m_beaconPort, word);
    bytes.append(word, 2);
    for (const QHostAddress &address : m_addresses) {
        qToBigEndian<quint32>(address.toIPv4Address(), word);
        bytes.append(word, 4);
    }
    qToBigEndian<quint16>(checksum(bytes), word);
    bytes.append(word, 2);
    const QString symbols = encodeBase32(bytes);
    QStringList groups;
    for (qsizetype at = 0; at < symbols.size(); at += GroupSize)
        groups << symbols.mid(at, GroupSize);
    return groups.join(u'-');
}

QStringList JoinCode::beaconContacts() const
{
    QStringList contacts;
    for (const QHostAddress &address : m_addresses)
        contacts << RootAddress::beaconContact(address, m_beaconPort);
    return contacts;
}

QByteArray JoinCode::worldKey(const QString &worldName) const
{
    // The world name salts the key, so one code's secret gives each world
    // its own key and a table of keys made for one name fits no other.
    const QByteArray salt = QByteArrayLiteral("MMPI join code 1\0") + worldName.toUtf8();
    return QPasswordDigestor::deriveKeyPbkdf2(QCryptographicHash::Sha256, m_secret, salt, KeyIterations, 32);
}

QImage JoinCode::toQrImage(int moduleSize) const
{
    if (!isValid() || moduleSize < 1 || moduleSize > 64)
        return {};
    const QByteArray text = toString().toLatin1();
    // Case-sensitive, so that libqrencode keeps the capitals and picks its
    // alphanumeric mode (digits, capitals and '-'), the densest for a code.
    const std::unique_ptr<QRcode, decltype(&QRcode_free)> qr(
        QRcode_encodeString(text.constData(), 0, QR_ECLEVEL_M, QR_MODE_8, 1), &QRcode_free);
    if (!qr)
        return {};
    constexpr int QuietZone = 4;
    const int side = (qr->width + 2 * QuietZone) * moduleSize;
    QImage image(side, side, QImage::Format_Mono);
    image.fill(Qt::color1);
    image.setColor(0, qRgb(0, 0, 0));
    image.setColor(1, qRgb(255, 255, 255));
    for (int y = 0; y < qr->width; ++y) {
        for (int x = 0; x < qr->width; ++x) {
            if (!(qr->data[y * qr->width + x] & 1))
                continue;
            for (int dy = 0; dy < moduleSize; ++dy)
                for (int dx = 0; dx < moduleSize; ++dx)
                    image.setPixel((QuietZone + x) * moduleSize + dx, (QuietZone + y) * moduleSize + dy, 0);
        }
    }
    return image;
}

} // namespace mmpi
