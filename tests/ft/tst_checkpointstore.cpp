// The checkpoint store: round trips of bytes and QDataStream objects, epochs
// and how many are kept, the default location, a corrupt, truncated or
// unfinished newest checkpoint passed over with the reason, a full disk and
// an unusable directory refused with the previous checkpoint intact, and
// SIGKILL at 100 random moments of a writer: restore always finds a whole one.
#include "checkpointpattern.h"

#include <mmpi/ft/checkpointstore.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <sys/resource.h>

using namespace mmpi;

namespace {

struct Score
{
    QString player;
    QList<qint32> points;
    bool operator==(const Score &) const = default;
};
QDataStream &operator<<(QDataStream &s, const Score &v) { return s << v.player << v.points; }
QDataStream &operator>>(QDataStream &s, Score &v) { return s >> v.player >> v.points; }

// A store in `dir` whose state is `state`.
void useBytes(CheckpointStore &store, const QString &dir, QByteArray &state)
{
    store.setDirectory(dir);
    store.setState([&state] { return state; }, [&state](const QByteArray &b) {
        state = b;
        return success();
    });
}

QString fileOf(const QString &dir, quint64 epoch)
{
    return QStringLiteral("%1/checkpoint-%2.mmpi-ckpt").arg(dir).arg(epoch, 20, 10, QLatin1Char('0'));
}

} // namespace

class TestCheckpointStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void objectRoundTripAndEpochs()
    {
        QTemporaryDir dir;
        Score score{QStringLiteral("anna"), {3, 5}};
        CheckpointStore store;
        store.setDirectory(dir.path());
        store.setStateObject(&score);
        QSignalSpy written(&store, &CheckpointStore::checkpointed);
        QCOMPARE(*store.checkpoint(), 1u);
        score.points << 8;
        QCOMPARE(*store.checkpoint(), 2u);
        QCOMPARE(written.size(), 2);
        QCOMPARE(written.at(1).at(0).toULongLong(), 2u);

        score = {};
        const auto restored = store.restore();
        QVERIFY2(restored, qPrintable(restored ? QString() : restored.error().message));
        QCOMPARE(restored->epoch, 2u);
        QVERIFY(restored->skipped.isEmpty());
        QCOMPARE(score, (Score{QStringLiteral("anna"), {3, 5, 8}}));
        // An older epoch on request: what a coordinated restore does.
        QCOMPARE(store.restore(1)->epoch, 1u);
        QCOMPARE(score.points, (QList<qint32>{3, 5}));

        // Two kept by default: the newest and the one before.
        QVERIFY(store.checkpoint());
        QCOMPARE(store.epochs(), (QList<quint64>{2, 3}));
        // A coordinated checkpoint takes the epoch it is given.
        QCOMPARE(*store.checkpoint(10), 10u);
        QCOMPARE(store.epochs(), (QList<quint64>{3, 10}));
    }

    void defaultLocationIsTheAppsDataDirectory()
    {
        CheckpointStore store(QStringLiteral("game"));
        QCOMPARE(store.directory(), QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
                                        + QStringLiteral("/checkpoints/game"));
    }

    void corruptOrTruncatedNewestIsPassedOver_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("reason");
        QTest::newRow("flipped byte") << "flip" << "epoch 2: corrupt (checksum mismatch)";
        QTest::newRow("truncated") << "truncate" << "epoch 2: incomplete (1000 of 2000 bytes of state)";
        QTest::newRow("header only") << "header" << "epoch 2: incomplete (20 bytes, shorter than a header)";
        QTest::newRow("not ours") << "garbage" << "epoch 2: not a checkpoint file";
    }

    void corruptOrTruncatedNewestIsPassedOver()
    {
        QFETCH(QString, damage);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        QByteArray state(2000, 'a');
        CheckpointStore store;
        useBytes(store, dir.path(), state);
        QVERIFY(store.checkpoint());
        state.fill('b');
        QVERIFY(store.checkpoint());

        QFile file(fileOf(dir.path(), 2));
        QVERIFY(file.open(QIODevice::ReadWrite));
        QByteArray bytes = file.readAll();
        if (damage == u"flip")
            bytes[bytes.size() - 7] = char(bytes.at(bytes.size() - 7) ^ 0x01);
        else if (damage == u"truncate")
            bytes.chop(1000);
        else if (damage == u"header")
            bytes.truncate(20);
        else
            bytes = QByteArray(4000, 'x');
        QVERIFY(file.resize(0) && file.seek(0) && file.write(bytes) == bytes.size());
        file.close();

        state.clear();
        const auto restored = store.restore();
        QVERIFY2(restored, qPrintable(restored ? QString() : restored.error().message));
        QCOMPARE(restored->epoch, 1u);
        QCOMPARE(restored->skipped, QStringList{reason});
        QCOMPARE(state, QByteArray(2000, 'a'));
    }

    void unfinishedWriteIsPassedOverAndCleanedUp()
    {
        QTemporaryDir dir;
        QByteArray state("first");
        CheckpointStore store;
        useBytes(store, dir.path(), state);
        QVERIFY(store.checkpoint());
        QFile partial(fileOf(dir.path(), 2) + QStringLiteral(".tmp"));
        QVERIFY(partial.open(QIODevice::WriteOnly) && partial.write("MMPICKPT half") > 0);
        partial.close();

        const auto restored = store.restore();
        QVERIFY(restored);
        QCOMPARE(restored->epoch, 1u);
        QCOMPARE(restored->skipped, QStringList{QStringLiteral("epoch 2: incomplete (the write never finished)")});
        state = "second";
        QCOMPARE(*store.checkpoint(), 2u);
        QVERIFY(!QFile::exists(partial.fileName()));
    }

    void fullDiskKeepsThePreviousCheckpoint()
    {
        QTemporaryDir dir;
        QByteArray state(1000, 'p');
        CheckpointStore store;
        useBytes(store, dir.path(), state);
        QVERIFY(store.checkpoint());

        // No file may grow past 64 KiB: what a full disk does to a write
        // (EFBIG here, ENOSPC there), without filling a real disk.
        rlimit old{};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        const auto previous = std::signal(SIGXFSZ, SIG_IGN);
        rlimit small = old;
        small.rlim_cur = 64 * 1024;
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        state = QByteArray(1024 * 1024, 'q');
        const auto failed = store.checkpoint();
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, previous);

        QVERIFY(!failed);
        QCOMPARE(failed.error().code, ErrorCode::CheckpointFailed);
        QVERIFY2(failed.error().message.contains(QStringLiteral("cannot write")), qPrintable(failed.error().message));
        QVERIFY2(failed.error().message.contains(QStringLiteral("File too large")), qPrintable(failed.error().message));
        // Nothing half-written is left, and the previous one is whole.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QFileInfo(fileOf(dir.path(), 1)).fileName()});
        state.clear();
        QCOMPARE(store.restore()->epoch, 1u);
        QCOMPARE(state, QByteArray(1000, 'p'));
    }

    void unusableDirectoryIsAClearError()
    {
        QTemporaryDir dir;
        QFile blocker(dir.filePath(QStringLiteral("blocker")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QByteArray state("x");
        CheckpointStore store;
        useBytes(store, blocker.fileName() + QStringLiteral("/checkpoints"), state);
        const auto failed = store.checkpoint();
        QVERIFY(!failed);
        QCOMPARE(failed.error().code, ErrorCode::CheckpointFailed);
        QVERIFY2(failed.error().message.startsWith(QStringLiteral("cannot create the directory")),
                 qPrintable(failed.error().message));
    }

    void nothingToRestoreOrSave()
    {
        QTemporaryDir dir;
        CheckpointStore store;
        store.setDirectory(dir.path());
        QCOMPARE(store.checkpoint().error().code, ErrorCode::CheckpointFailed);
        QByteArray state;
        useBytes(store, dir.path(), state);
        const auto none = store.restore();
        QVERIFY(!none);
        QCOMPARE(none.error().code, ErrorCode::NoCheckpoint);
        QVERIFY2(none.error().message.startsWith(QStringLiteral("no checkpoint in")), qPrintable(none.error().message));
    }

    // Issue 6: SIGKILL at random points during checkpoint writes, 100 times.
    void killedWriterNeverLeavesATornCheckpoint()
    {
        QTemporaryDir dir;
        QByteArray state = checkpointPattern(1);
        CheckpointStore store;
        useBytes(store, dir.path(), state);
        QVERIFY(store.checkpoint(1)); // so that there is always one to find
        const quint32 seed = QRandomGenerator::global()->generate();
        QRandomGenerator random(seed);
        int midWrite = 0;
        quint64 newest = 1;
        for (int round = 0; round < 100; ++round) {
            QProcess writer;
            writer.start(QStringLiteral(CHECKPOINT_WRITER_PATH), {dir.path(), QString::number(newest + 1)});
            QVERIFY(writer.waitForStarted(10000));
            QVERIFY(writer.waitForReadyRead(10000)); // "ready": it writes from now on
            QTest::qSleep(int(random.bounded(1, 40)));
            writer.kill(); // SIGKILL
            QVERIFY(writer.waitForFinished(10000));
            QVERIFY2(writer.exitStatus() == QProcess::CrashExit,
                     qPrintable(QString::fromLocal8Bit(writer.readAllStandardError())));
            midWrite += QDir(dir.path()).entryList({QStringLiteral("*.tmp")}, QDir::Files).size();

            state.clear();
            const auto restored = store.restore();
            QVERIFY2(restored, qPrintable(QStringLiteral("round %1 (seed %2): %3")
                                              .arg(round).arg(seed)
                                              .arg(restored ? QString() : restored.error().message)));
            QVERIFY2(state == checkpointPattern(restored->epoch),
                     qPrintable(QStringLiteral("round %1: epoch %2 restored torn").arg(round).arg(restored->epoch)));
            QVERIFY(restored->epoch >= newest);
            for (const QString &line : restored->skipped)
                QVERIFY2(line.endsWith(QStringLiteral("incomplete (the write never finished)")), qPrintable(line));
            newest = restored->epoch;
        }
        qInfo("100 kills (seed %u): %d landed during a write; newest epoch %llu", seed, midWrite,
              static_cast<unsigned long long>(newest));
        QVERIFY(newest > 1);
    }
};

QTEST_GUILESS_MAIN(TestCheckpointStore)
#include "tst_checkpointstore.moc"
