// Sealed links in real worlds over tcp: a relay between rank 1 and rank 0
// flips a bit of a sealed record, replays one, swaps two or drops one. Rank
// 0 refuses it with the reason (World::peerRefused, RecordRefused), the link
// breaks, and the world reconnects and resumes: every message arrives once,
// in order, and nobody is lost.
#include "tamperingrelay.h"
#include "worldharness.h"

#include <mmpi/world/world.h>

#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include <atomic>
#include <thread>

using namespace mmpi;
using namespace mmpi::test;
using namespace std::chrono_literals;

namespace {

constexpr int Patience = 20000;

Frame numbered(qint64 n)
{
    QByteArray payload(64, char(n & 0x7f));
    qToBigEndian<qint64>(n, payload.data());
    return makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload);
}

} // namespace

class TestSealedLinks : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tamperedRecordIsRefusedAndResumed_data();
    void tamperedRecordIsRefusedAndResumed();
    void bothEndsOfALinkShowOneVerificationCode();
};

void TestSealedLinks::tamperedRecordIsRefusedAndResumed_data()
{
    QTest::addColumn<TamperingRelay::Tamper>("tamper");
    QTest::addColumn<QString>("reason");
    QTest::newRow("bit flipped") << TamperingRelay::Tamper::FlipBit << QStringLiteral("failed authentication");
    QTest::newRow("replayed") << TamperingRelay::Tamper::Replay << QStringLiteral("arrived where record");
    QTest::newRow("reordered") << TamperingRelay::Tamper::Reorder << QStringLiteral("arrived where record");
    QTest::newRow("dropped") << TamperingRelay::Tamper::Drop << QStringLiteral("arrived where record");
}

void TestSealedLinks::tamperedRecordIsRefusedAndResumed()
{
    QFETCH(TamperingRelay::Tamper, tamper);
    QFETCH(QString, reason);
    // Given a world of two whose only link runs through the relay (rank 1
    // joins rank 0 there; a resumed link is dialled to rank 0 itself)
    WorldHarness harness(QStringLiteral("tcp"), WorldConfig::Mode::Launched);
    WorldConfig root = harness.config(0, 2);
    TamperingRelay relay(quint16(QUrl(root.rootAddress).port()));
    WorldConfig node = harness.config(1, 2);
    node.rootAddress = relay.address();
    std::vector<World *> worlds;
    for (WorldConfig config : {root, node}) {
        config.heartbeatInterval = 100ms;
        config.heartbeatTimeout = 2000ms;
        config.reconnectGracePeriod = 10s;
        worlds.push_back(harness.start(config));
    }
    QTRY_VERIFY_WITH_TIMEOUT(worlds[0]->state() == World::State::Formed
                                 && worlds[1]->state() == World::State::Formed, Patience);
    QSignalSpy refused(worlds[0], &World::peerRefused);
    QSignalSpy returned0(worlds[0], &World::nodeReturned);
    QSignalSpy returned1(worlds[1], &World::nodeReturned);
    QSignalSpy lost(worlds[0], &World::nodeLost);
    QSignalSpy recoded0(worlds[0], &World::verificationCodeChanged);
    QSignalSpy recoded1(worlds[1], &World::verificationCodeChanged);
    QList<qint64> numbers;
    QObject::connect(worlds[0], &World::frameReceived, worlds[0], [&numbers](const Frame &frame) {
        numbers.append(qFromBigEndian<qint64>(frame.payload.constData()));
    });

    // When the relay tampers with a record while rank 1 streams to rank 0
    relay.arm(tamper);
    std::atomic<qint64> sent = 0;
    std::thread sender([&] {
        for (qint64 n = 0; n < 400; ++n) {
            if (!worlds[1]->sendFrame(0, numbered(n)))
                return;
            sent = n + 1;
            std::this_thread::sleep_for(2ms);
        }
    });
    QTest::qWait(1000);
    sender.join();

    // Then rank 0 refuses it, saying why, and the world resumes exactly once
    QVERIFY(relay.tampered());
    QTRY_VERIFY_WITH_TIMEOUT(!refused.isEmpty(), Patience);
    const Error error = refused.at(0).at(1).value<Error>();
    QCOMPARE(error.code, ErrorCode::RecordRefused);
    QVERIFY2(error.message.contains(reason), qPrintable(error.message));
    QTRY_COMPARE_WITH_TIMEOUT(numbers.size(), qsizetype(sent.load()), Patience);
    QTest::qWait(200); // a duplicate would come now
    QCOMPARE(numbers.size(), qsizetype(sent.load()));
    for (qsizetype i = 0; i < numbers.size(); ++i)
        QCOMPARE(numbers.at(i), qint64(i));
    QTRY_COMPARE_WITH_TIMEOUT(returned0.size(), 1, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(returned1.size(), 1, Patience);
    QCOMPARE(refused.size(), 1);
    QCOMPARE(lost.size(), 0);
    // The resumed link has new keys, and both ends show its new code.
    QTRY_VERIFY_WITH_TIMEOUT(!recoded0.isEmpty() && !recoded1.isEmpty(), Patience);
    QCOMPARE(worlds[0]->verificationCode(1).value(), worlds[1]->verificationCode(0).value());
}

void TestSealedLinks::bothEndsOfALinkShowOneVerificationCode()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    std::vector<World *> worlds;
    for (int i = 0; i < 3; ++i)
        worlds.push_back(harness.start(harness.config(i, 3)));
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(worlds.begin(), worlds.end(),
                                         [](World *w) { return w->state() == World::State::Formed; }),
                             Patience);
    // Each pair's two ends show the same six digits; each link its own.
    static const QRegularExpression digits(QStringLiteral("^\\d{3} \\d{3}$"));
    QStringList codes;
    for (int a = 0; a < 3; ++a) {
        for (int b = a + 1; b < 3; ++b) {
            QTRY_VERIFY_WITH_TIMEOUT(worlds[a]->verificationCode(b) && worlds[b]->verificationCode(a), Patience);
            const QString code = *worlds[a]->verificationCode(b);
            QVERIFY2(digits.match(code).hasMatch(), qPrintable(code));
            QCOMPARE(*worlds[b]->verificationCode(a), code);
            codes << code;
        }
    }
    QVERIFY2(codes.at(0) != codes.at(1) || codes.at(1) != codes.at(2), qPrintable(codes.join(u',')));
    QCOMPARE(worlds[0]->verificationCode(0).error().code, ErrorCode::InvalidRank);
    QCOMPARE(worlds[0]->verificationCode(7).error().code, ErrorCode::InvalidRank);
}

QTEST_GUILESS_MAIN(TestSealedLinks)
#include "tst_sealedlinks.moc"
