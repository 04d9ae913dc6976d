// Sealed links' key exchange and key schedule (KeyExchange, KeySchedule; an
// internal part of the world): the primitives against their RFCs' vectors,
// the schedule against known answers computed outside MMPI
// (tests/wire/sealing_vectors.py), and what makes the keys differ.
#include "keyexchange.h"
#include "keyschedule.h"

#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;

namespace {

LinkTranscript katTranscript()
{
    LinkTranscript t;
    t.worldName = QStringLiteral("kat-world");
    t.acceptorNodeId = QStringLiteral("acceptor-node");
    t.acceptorNonce = QByteArray(32, '\x11');
    t.connectorNonce = QByteArray(32, '\x22');
    t.acceptorPublicKey = QByteArray(32, '\x33');
    t.connectorPublicKey = QByteArray(32, '\x44');
    t.purpose = LinkPurpose::Mesh;
    t.connectorNodeId = QStringLiteral("connector-node");
    t.connectorRank = 1;
    t.connectorListenAddress = QStringLiteral("tcp://127.0.0.1:7001");
    return t;
}

LinkSecrets katSecrets(const LinkTranscript &transcript = katTranscript(),
                       const QByteArray &worldKey = QByteArrayLiteral("correct horse"))
{
    auto secrets = KeySchedule::derive(QByteArray(32, '\x55'), worldKey, transcript);
    if (!secrets)
        qFatal("key schedule failed: %s", qPrintable(secrets.error().toString()));
    return *secrets;
}

} // namespace

class TestKeySchedule : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hkdfMatchesRfc5869();
    void x25519MatchesRfc7748();
    void lowOrderPublicKeyIsRefused();
    void freshKeyPairsDiffer();
    void scheduleMatchesKnownAnswer();
    void proofsMatchKnownAnswer();
    void everyInputChangesTheKeys();
    void verificationCodeMatchesKnownAnswer();
};

void TestKeySchedule::hkdfMatchesRfc5869()
{
    // RFC 5869, test case 1.
    QByteArray salt;
    for (int i = 0; i < 13; ++i)
        salt.append(char(i));
    QByteArray info;
    for (int i = 0xf0; i <= 0xf9; ++i)
        info.append(char(i));
    const auto okm = KeySchedule::hkdf(salt, QByteArray(22, '\x0b'), info, 42);
    QVERIFY(okm.hasValue());
    QCOMPARE(okm->toHex(), QByteArrayLiteral("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
                                             "34007208d5b887185865"));
}

void TestKeySchedule::x25519MatchesRfc7748()
{
    // RFC 7748, section 6.1.
    const auto alice = KeyExchange::fromPrivateKey(QByteArray::fromHex(
        "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"));
    const auto bob = KeyExchange::fromPrivateKey(QByteArray::fromHex(
        "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"));
    QVERIFY(alice.hasValue() && bob.hasValue());
    QCOMPARE(alice->publicKey().toHex(), QByteArrayLiteral("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"));
    QCOMPARE(bob->publicKey().toHex(), QByteArrayLiteral("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"));
    const auto fromAlice = alice->agree(bob->publicKey());
    const auto fromBob = bob->agree(alice->publicKey());
    QVERIFY(fromAlice.hasValue() && fromBob.hasValue());
    QCOMPARE(fromAlice->toHex(), QByteArrayLiteral("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"));
    QCOMPARE(*fromBob, *fromAlice);
}

// A peer that sends a low-order point would fix the shared secret (all
// zeros) whatever our key: refused, as is a key of the wrong size.
void TestKeySchedule::lowOrderPublicKeyIsRefused()
{
    const auto own = KeyExchange::generate();
    QVERIFY(own.hasValue());
    const auto zero = own->agree(QByteArray(32, '\0'));
    QVERIFY(!zero.hasValue());
    QCOMPARE(zero.error().code, ErrorCode::ProtocolViolation);
    const auto shortKey = own->agree(QByteArray(31, '\x09'));
    QVERIFY(!shortKey.hasValue());
    QCOMPARE(shortKey.error().code, ErrorCode::ProtocolViolation);
}

void TestKeySchedule::freshKeyPairsDiffer()
{
    const auto a = KeyExchange::generate();
    const auto b = KeyExchange::generate();
    QVERIFY(a.hasValue() && b.hasValue());
    QCOMPARE(a->publicKey().size(), KeyExchange::PublicKeySize);
    QVERIFY(a->publicKey() != b->publicKey());
    QCOMPARE(*a->agree(b->publicKey()), *b->agree(a->publicKey()));
}

void TestKeySchedule::scheduleMatchesKnownAnswer()
{
    const LinkSecrets s = katSecrets();
    QCOMPARE(s.transcriptHash.toHex(), QByteArrayLiteral("ffbbc4f3ccfa9f308aa4ca61ea7e6ff1484815621a4ec38efce131f84e60e5aa"));
    QCOMPARE(s.connectorProofKey.toHex(), QByteArrayLiteral("d2ce8ca8d39211195ee55f19f57dc29e62f4da9738d1a2754ffcf1477a100fd6"));
    QCOMPARE(s.acceptorProofKey.toHex(), QByteArrayLiteral("771336f4d9886b28104c745f59f793f60ea586ab96e2b634e23de982526c9489"));
    QCOMPARE(s.connectorToAcceptorKey.toHex(), QByteArrayLiteral("e064f3a24be99f200cfce73d0461faedbf00abb27978afe15c1e45e44c7f7c20"));
    QCOMPARE(s.acceptorToConnectorKey.toHex(), QByteArrayLiteral("1723a1a4f12938e86bcf4812cdfc27e21be799a08e87a0fbe9fffa87692decbc"));
}

void TestKeySchedule::proofsMatchKnownAnswer()
{
    const LinkSecrets s = katSecrets();
    QCOMPARE(KeySchedule::connectorProof(s).toHex(),
             QByteArrayLiteral("a1750ef4ecf445915951cbcb5f1644e65f9b75715abc54098cfe8d66377a6fb0"));
    QCOMPARE(KeySchedule::acceptorProof(s, 0, QStringLiteral("tcp://127.0.0.1:7000")).toHex(),
             QByteArrayLiteral("66b93f9eab653a2ce7fc5f7d836b772c867236178937893aeafe0a7c07ee6a37"));
}

// Each input of the schedule reaches every key: a link whose ends saw
// different handshakes (someone in between changed one) gets no common key.
void TestKeySchedule::everyInputChangesTheKeys()
{
    const LinkSecrets reference = katSecrets();
    QList<LinkTranscript> changed(8, katTranscript());
    changed[0].worldName += u'x';
    changed[1].acceptorNonce[0] = 'x';
    changed[2].connectorNonce[31] = 'x';
    changed[3].acceptorPublicKey[5] = 'x';
    changed[4].connectorPublicKey[7] = 'x';
    changed[5].purpose = LinkPurpose::Resume;
    changed[6].connectorRank = 2;
    changed[7].connectorListenAddress += u'0';
    for (const LinkTranscript &t : changed) {
        const LinkSecrets s = katSecrets(t);
        QVERIFY(s.connectorProofKey != reference.connectorProofKey);
        QVERIFY(s.connectorToAcceptorKey != reference.connectorToAcceptorKey);
        QVERIFY(s.acceptorToConnectorKey != reference.acceptorToConnectorKey);
    }
    const LinkSecrets otherWorldKey = katSecrets(katTranscript(), QByteArrayLiteral("correct horse!"));
    QVERIFY(otherWorldKey.connectorProofKey != reference.connectorProofKey);
    QVERIFY(otherWorldKey.connectorToAcceptorKey != reference.connectorToAcceptorKey);
    const LinkSecrets otherSecret = *KeySchedule::derive(QByteArray(32, '\x56'), QByteArrayLiteral("correct horse"),
                                                         katTranscript());
    QVERIFY(otherSecret.connectorProofKey != reference.connectorProofKey);
    // The four keys differ from each other.
    const QSet<QByteArray> keys{reference.connectorProofKey, reference.acceptorProofKey,
                                reference.connectorToAcceptorKey, reference.acceptorToConnectorKey};
    QCOMPARE(keys.size(), 4);
}

// HMAC-SHA256 keyed with the transcript hash over "MMPI/2 verification code",
// its first 4 bytes big-endian modulo 10^6 (Python's hmac, for hash bytes
// 0x00..0x1f); both ends derive it from the transcript they share.
void TestKeySchedule::verificationCodeMatchesKnownAnswer()
{
    LinkSecrets secrets;
    for (int i = 0; i < 32; ++i)
        secrets.transcriptHash.append(char(i));
    QCOMPARE(KeySchedule::verificationCode(secrets), QStringLiteral("506 987"));
    secrets.transcriptHash[0] = 1;
    QVERIFY(KeySchedule::verificationCode(secrets) != QStringLiteral("506 987"));
}

QTEST_GUILESS_MAIN(TestKeySchedule)
#include "tst_keyschedule.moc"
