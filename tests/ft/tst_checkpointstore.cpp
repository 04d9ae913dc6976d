// The checkpoint store: round trips of bytes and QDataStream objects, epochs
// and how many are kept, the default location, a corrupt, truncated or
// unfinished newest checkpoint passed over with the reason, a full disk and
// an unusable directory refused with the previous checkpoint intact, and
// SIGKILL at 100 random moments of a writer: restore always finds a whole one.
// The default directory of a node in a world names the world and
// the rank, so the ranks of one world in one process (as under mmpirun: one
// app, one machine) checkpoint side by side and each gets its own state
// back; a directory another store holds (this process or another) is
// refused naming the holder; the lock goes with the store, and a killed
// holder's lock is taken over.
#include "checkpointpattern.h"
#include "coordinatedrun.h"
#include "why.h"

#include <mmpi/ft/checkpointstore.h>
#include <mmpi/ft/coordinatedcheckpoint.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <sys/resource.h>

using namespace mmpi;
using mmpi::test::why;

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
    return dir + QStringLiteral("/checkpoint-%1.mmpi-ckpt").arg(epoch, 20, 10, QLatin1Char('0'));
}

QString lockOf(const QString &dir)
{
    return dir + QStringLiteral("/.lock");
}

QString messageOf(const Error &error)
{
    return error.toString();
}

// A node of a world: its state and a store in the default directory.
struct RankState
{
    RankState(const World &world, const QByteArray &initial) : state(initial), store(world)
    {
        store.setState([this] { return state; }, [this](const QByteArray &bytes) {
            state = bytes;
            return success();
        });
    }
    QByteArray state;
    CheckpointStore store;
};

} // namespace

class TestCheckpointStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        // Default directories are written to here: nothing touches the real home.
        QVERIFY(m_home.isValid());
        qputenv("HOME", QFile::encodeName(m_home.path()));
        qputenv("XDG_DATA_HOME", QFile::encodeName(m_home.filePath(QStringLiteral(".local/share"))));
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY2(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation).startsWith(m_home.path()),
                 qPrintable(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)));
    }

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
        QVERIFY2(restored, qPrintable(why(restored)));
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
        QCOMPARE(CheckpointStore::defaultDirectory(QStringLiteral("game")), store.directory());
    }

    // Four ranks of one world in one process, as four nodes of one
    // app on one machine are under mmpirun. Each default directory names the
    // world and the rank; all checkpoint the same epochs side by side, and
    // each restores its own state.
    void defaultDirectoryOfAWorldNamesTheWorldAndTheRank()
    {
        test::CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        const QString worldName = w.world(0)->config().worldName;
        const QString root = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        std::vector<std::unique_ptr<RankState>> ranks;
        for (int r = 0; r < 4; ++r) {
            ranks.push_back(std::make_unique<RankState>(*w.world(r), QByteArray("state of rank ") + QByteArray::number(r)));
            QCOMPARE(ranks[r]->store.directory(),
                     QStringLiteral("%1/checkpoints/%2/rank-%3/default").arg(root, worldName).arg(r));
            QCOMPARE(CheckpointStore::defaultDirectory(*w.world(r)), ranks[r]->store.directory());
        }
        CheckpointStore named(*w.world(1), QStringLiteral("game"));
        QCOMPARE(named.directory(), QStringLiteral("%1/checkpoints/%2/rank-1/game").arg(root, worldName));

        // Coordinated: the same epoch on every rank, the same file names, in
        // four directories (one shared directory made these fail at random).
        for (int round = 1; round <= 3; ++round) {
            for (int r = 0; r < 4; ++r)
                ranks[r]->state = QByteArray("rank ") + QByteArray::number(r) + " round " + QByteArray::number(round);
            const auto taken = together(w, [&](int r) { return CoordinatedCheckpoint::take(w[r], &ranks[r]->store); });
            for (int r = 0; r < 4; ++r) {
                QVERIFY2(!taken[r].error.isError(), qPrintable(messageOf(taken[r].error)));
                QCOMPARE(taken[r].epoch, quint64(round));
            }
        }
        for (auto &rank : ranks)
            rank->state = "moved on";
        const auto restored = together(w, [&](int r) { return CoordinatedCheckpoint::restore(w[r], &ranks[r]->store); });
        for (int r = 0; r < 4; ++r) {
            QVERIFY2(!restored[r].error.isError(), qPrintable(messageOf(restored[r].error)));
            QCOMPARE(restored[r].epoch, 3u);
            QCOMPARE(ranks[r]->state, QByteArray("rank ") + QByteArray::number(r) + " round 3");
            QCOMPARE(ranks[r]->store.epochs(), (QList<quint64>{2, 3}));
        }
    }

    // The rank is the one form() was given while the world forms (a launched
    // node, or a REBUILD replacement taking its lost rank), and a world's
    // name of any characters stays one directory.
    void defaultDirectoryWhileFormingAndOfAnOddWorldName()
    {
        const QString root = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/checkpoints");
        test::WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
        const QList<std::pair<QString, QString>> names{
            {QStringLiteral("../up/and away"), QStringLiteral("..%2Fup%2Fand%20away")},
            {QStringLiteral(".."), QStringLiteral("%2E%2E")},
            {QStringLiteral("plain-name_1.2~"), QStringLiteral("plain-name_1.2~")},
        };
        for (const auto &[name, directoryName] : names) {
            World world;
            WorldConfig config = harness.config(2, 4); // rank 0 never comes: it stays forming
            config.worldName = name;
            config.rejoin = true;
            world.form(config);
            QCOMPARE(world.state(), World::State::Forming);
            CheckpointStore store(world);
            QCOMPARE(store.directory(), QStringLiteral("%1/%2/rank-2/default").arg(root, directoryName));
            // Written and read there, '%' and all.
            QByteArray state = name.toUtf8();
            store.setState([&state] { return state; }, [&state](const QByteArray &b) {
                state = b;
                return success();
            });
            QVERIFY(store.checkpoint());
            QVERIFY(QFile::exists(fileOf(store.directory(), 1)));
            state.clear();
            QVERIFY(store.restore());
            QCOMPARE(state, name.toUtf8());
        }
        // A long name is cut, with a hash of the whole: two that share their start stay apart.
        World first, second;
        WorldConfig config = harness.config(1, 2);
        config.worldName = QString(300, u'w') + u'1';
        first.form(config);
        config.worldName = QString(300, u'w') + u'2';
        second.form(config);
        const QString one = CheckpointStore::defaultDirectory(first), two = CheckpointStore::defaultDirectory(second);
        QVERIFY(one != two);
        for (const QString &dir : {one, two}) {
            const QString worldPart = dir.sliced(root.size() + 1).section(u'/', 0, 0);
            QVERIFY2(worldPart.size() <= 120 && worldPart.startsWith(QString(80, u'w')), qPrintable(worldPart));
            QVERIFY(dir.endsWith(QStringLiteral("/rank-1/default")));
        }
    }

    void storeOfAWorldWithoutARankHasNoDirectory()
    {
        QTemporaryDir dir; // outlives the store, which leaves its lock there
        World world; // form() not called: no rank yet
        QString why;
        QCOMPARE(CheckpointStore::defaultDirectory(world, QStringLiteral("default"), &why), QString());
        QVERIFY2(why.contains(QStringLiteral("not formed")), qPrintable(why));
        QByteArray state("x");
        CheckpointStore store(world);
        store.setState([&state] { return state; }, [&state](const QByteArray &b) {
            state = b;
            return success();
        });
        QCOMPARE(store.directory(), QString());
        QVERIFY(store.epochs().isEmpty());
        const auto written = store.checkpoint();
        QVERIFY(!written);
        QCOMPARE(written.error().code, ErrorCode::CheckpointFailed);
        QVERIFY2(written.error().message.startsWith(QStringLiteral("the store has no directory: the world is not formed")),
                 qPrintable(written.error().message));
        QCOMPARE(store.restore().error().code, ErrorCode::CheckpointFailed);
        QCOMPARE(store.read(1).error().code, ErrorCode::NoCheckpoint);
        // Given one, it works.
        store.setDirectory(dir.path());
        QVERIFY(store.checkpoint());
    }

    // A directory another store of this process holds is refused,
    // naming the holder, and nothing of the second store reaches it.
    void lockedDirectoryIsRefusedNamingTheHolder()
    {
        QTemporaryDir dir;
        QByteArray mine("the holder's"), theirs("the intruder's");
        CheckpointStore holder;
        useBytes(holder, dir.path(), mine);
        QVERIFY(holder.checkpoint());
        QVERIFY(QFile::exists(lockOf(dir.path())));

        CheckpointStore intruder;
        useBytes(intruder, dir.path(), theirs);
        const auto refused = intruder.checkpoint();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::CheckpointInUse);
        const QString message = refused.error().message;
        QVERIFY2(message.startsWith(QStringLiteral("the checkpoint directory %1 is in use by another store of this "
                                                   "process: pid %2 (%3) on host %4 holds its lock %5")
                                        .arg(dir.path())
                                        .arg(QCoreApplication::applicationPid())
                                        .arg(QStringLiteral("tst_checkpointstore"), QSysInfo::machineHostName(),
                                             lockOf(dir.path()))),
                 qPrintable(message));
        QCOMPARE(intruder.importState(5, "forged").error().code, ErrorCode::CheckpointInUse);
        QCOMPARE(intruder.restore().error().code, ErrorCode::CheckpointInUse);
        QCOMPARE(intruder.lockDirectory().error().message, message);
        QCOMPARE(theirs, QByteArray("the intruder's")); // nothing was loaded into it

        // The holder's checkpoint is all there is, and whole.
        QCOMPARE(holder.epochs(), QList<quint64>{1});
        mine.clear();
        QCOMPARE(holder.restore()->epoch, 1u);
        QCOMPARE(mine, QByteArray("the holder's"));
        // Reading takes no lock: a look from outside is fine.
        QCOMPARE(*intruder.read(1), QByteArray("the holder's"));
    }

    // A coordinated checkpoint or restore with a member whose directory is
    // held fails on every member with CheckpointInUse, naming that rank.
    void coordinatedCheckpointNamesTheRankWhoseDirectoryIsHeld()
    {
        test::CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        QByteArray states[2] = {"zero", "one"};
        CheckpointStore stores[2];
        for (int r = 0; r < 2; ++r)
            useBytes(stores[r], dir.filePath(QStringLiteral("rank%1").arg(r)), states[r]);
        CheckpointStore squatter;
        squatter.setDirectory(stores[1].directory());
        QVERIFY(squatter.lockDirectory());
        for (const bool restoring : {false, true}) {
            const auto outcomes = together(w, [&](int r) {
                return restoring ? CoordinatedCheckpoint::restore(w[r], &stores[r])
                                 : CoordinatedCheckpoint::take(w[r], &stores[r]);
            });
            for (int r = 0; r < 2; ++r) {
                QCOMPARE(outcomes[r].error.code, ErrorCode::CheckpointInUse);
                QVERIFY2(outcomes[r].error.message.contains(QStringLiteral("failed on rank 1: the checkpoint directory %1 is in use")
                                                                .arg(stores[1].directory())),
                         qPrintable(outcomes[r].error.message));
            }
        }
    }

    // The lock goes when the store goes, or moves elsewhere.
    void lockGoesWithTheStore()
    {
        QTemporaryDir dir;
        QByteArray state("s");
        {
            CheckpointStore gone;
            useBytes(gone, dir.path(), state);
            QVERIFY(gone.lockDirectory());
            QVERIFY(QFile::exists(lockOf(dir.path())));
        }
        QVERIFY(!QFile::exists(lockOf(dir.path())));
        CheckpointStore next;
        useBytes(next, dir.path(), state);
        QVERIFY(next.checkpoint());
        next.setDirectory(dir.path() + QStringLiteral("/")); // the same directory: still held
        CheckpointStore other;
        other.setDirectory(dir.path());
        QCOMPARE(other.lockDirectory().error().code, ErrorCode::CheckpointInUse);

        const QString elsewhere = dir.filePath(QStringLiteral("elsewhere"));
        next.setDirectory(elsewhere);
        QVERIFY(!QFile::exists(lockOf(dir.path())));
        QVERIFY(other.lockDirectory());
        QVERIFY(next.checkpoint());
        QVERIFY(QFile::exists(lockOf(elsewhere)));
    }

    // Across processes: a live writer's directory is refused
    // naming it; once it is killed its lock is stale and taken over; and a
    // writer started on a directory this process holds is refused naming us.
    void lockHeldByAnotherProcess()
    {
        QTemporaryDir dir;
        QProcess writer;
        writer.start(QStringLiteral(CHECKPOINT_WRITER_PATH), {dir.path(), QStringLiteral("1")});
        QVERIFY(writer.waitForStarted(10000));
        QVERIFY(writer.waitForReadyRead(10000)); // "ready": it holds the lock
        QByteArray state;
        CheckpointStore store;
        useBytes(store, dir.path(), state);
        // Looking takes no lock; once one checkpoint is whole there is one to take over.
        QTRY_VERIFY_WITH_TIMEOUT(!store.epochs().isEmpty(), 10000);
        const auto refused = store.restore();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::CheckpointInUse);
        QVERIFY2(refused.error().message.contains(QStringLiteral("is in use by another store: pid %1 (checkpointwriter) on host %2")
                                                      .arg(writer.processId())
                                                      .arg(QSysInfo::machineHostName())),
                 qPrintable(refused.error().message));
        QVERIFY(state.isEmpty());

        writer.kill(); // SIGKILL: no destructor releases its lock
        QVERIFY(writer.waitForFinished(10000));
        QVERIFY(QFile::exists(lockOf(dir.path())));
        const auto restored = store.restore();
        QVERIFY2(restored, qPrintable(why(restored)));
        QCOMPARE(state, checkpointPattern(restored->epoch));

        QProcess second;
        second.start(QStringLiteral(CHECKPOINT_WRITER_PATH), {dir.path(), QString::number(restored->epoch + 1)});
        QVERIFY(second.waitForFinished(10000));
        QCOMPARE(second.exitStatus(), QProcess::NormalExit);
        QCOMPARE(second.exitCode(), 3);
        const QString error = QString::fromLocal8Bit(second.readAllStandardError());
        QVERIFY2(error.contains(QStringLiteral("is in use by another store: pid %1 (tst_checkpointstore) on host %2")
                                    .arg(QCoreApplication::applicationPid())
                                    .arg(QSysInfo::machineHostName())),
                 qPrintable(error));
        QCOMPARE(store.epochs().last(), restored->epoch); // it wrote nothing
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
        QVERIFY2(restored, qPrintable(why(restored)));
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
        {
            CheckpointStore first; // gone before the writers: they take the directory's lock
            useBytes(first, dir.path(), state);
            QVERIFY(first.checkpoint(1)); // so that there is always one to find
        }
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

            // A store of its own each round: it takes over the lock the
            // killed writer left (stale: no such process any more) and
            // gives it up for the next writer.
            CheckpointStore store;
            useBytes(store, dir.path(), state);
            state.clear();
            const auto restored = store.restore();
            QVERIFY2(restored, qPrintable(QStringLiteral("round %1 (seed %2): %3")
                                              .arg(round).arg(seed)
                                              .arg(why(restored))));
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

private:
    QTemporaryDir m_home;
};

QTEST_GUILESS_MAIN(TestCheckpointStore)
#include "tst_checkpointstore.moc"
