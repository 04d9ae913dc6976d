// mmpi::CheckpointStore: user-directed checkpoints of this node's state on
// persistent storage, written so that a crash at any moment leaves the newest
// complete checkpoint readable: write, flush, fsync, atomic rename, the
// previous one kept until the new one is complete (docs/guide/checkpoints.md).
// Each store has a directory of its own, locked while the store uses it.
#pragma once

#include <mmpi/core/result.h>

#include <QDataStream>
#include <QIODevice>
#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>

QT_BEGIN_NAMESPACE
class QLockFile;
QT_END_NAMESPACE

namespace mmpi {

class World;

class CheckpointStore : public QObject
{
    Q_OBJECT
public:
    using Producer = std::function<QByteArray()>;
    using Consumer = std::function<Result<void>(const QByteArray &state)>;

    // What restore() loaded, and why it did not take newer files.
    struct Restored
    {
        quint64 epoch = 0;
        qint64 bytes = 0;
        QString path;
        // One line per newer file passed over, e.g. "epoch 8: corrupt
        // (checksum mismatch)", "epoch 9: incomplete (the write never finished)".
        QStringList skipped;
    };

    // A store of this node's state in `world`. Its directory defaults to
    // defaultDirectory(world, name):
    // QStandardPaths::AppDataLocation/checkpoints/<world name>/rank-<rank>/<name>,
    // so that the nodes of one world on one machine (every rank under
    // mmpirun is the same app) never share one. The rank is the node's world
    // rank when the store is made: World::rank() once formed, else the rank
    // form() was given (a launched node, or a REBUILD replacement, which so
    // finds its lost rank's directory again on the same machine). The
    // directory stays with that rank: SHRINK renumbers communicators, not
    // world ranks. Made before the node has a rank (before form(), or a
    // discovered node before it is formed), the store has no directory: its
    // writes and restores fail with CheckpointFailed saying so (read() with
    // NoCheckpoint), until setDirectory().
    explicit CheckpointStore(const World &world, const QString &name = QStringLiteral("default"),
                             QObject *parent = nullptr);
    // A store outside any world: by default defaultDirectory(name),
    // QStandardPaths::AppDataLocation/checkpoints/<name>. Two processes of
    // the app with the same name would share it: the second one's store is
    // refused (CheckpointInUse, see lockDirectory()).
    explicit CheckpointStore(const QString &name = QStringLiteral("default"), QObject *parent = nullptr);
    ~CheckpointStore() override;

    // The default directories (AppDataLocation is the app's private storage
    // on Android too). The world's name is made a safe file name (characters
    // other than letters, digits, '-', '.', '_' and '~' percent-encoded; a
    // long one shortened with a hash of the whole). Empty, with the reason in
    // `why` if given, when the world has given this node no rank yet.
    static QString defaultDirectory(const QString &name);
    static QString defaultDirectory(const World &world, const QString &name = QStringLiteral("default"),
                                    QString *why = nullptr);

    // Checkpoints go to `directory` (created when needed). Moving to another
    // directory releases the lock on the old one; an empty path lets the
    // store's directory go without another (e.g. before removing it).
    void setDirectory(const QString &directory);
    QString directory() const { return m_directory; }

    // The store's claim on its directory: a lock file `.lock` there
    // (QLockFile), taken when the store first writes or restores
    // (checkpoint(), importState(), restore()), or now by this call for an
    // error at start-up rather than at the first checkpoint. Held until the
    // store is destroyed or moves to another directory. A directory another
    // store holds (in this process or another, on this host or, through a
    // shared file system, another) is refused with CheckpointInUse naming
    // the holder: its pid, app and host. A lock left by a holder that died
    // (no such process on this host any more) is stale and taken over. The
    // constructors take no lock: they cannot report an error, and a store
    // made to be moved by setDirectory() must not hold the default one.
    // Other errors (CheckpointFailed): no directory, or it or the lock file
    // cannot be made. Reading (epochs(), read()) takes no lock: files only
    // ever appear there by an atomic rename, so a partner's or a tool's look
    // into a directory another store writes is safe.
    Result<void> lockDirectory();

    // Complete checkpoints kept on disk (at least 2: the newest and the one
    // before, should the newest turn out unreadable). Default 2.
    void setKeep(int count);

    // The state to save and load: bytes, or any object with QDataStream operators.
    void setState(Producer save, Consumer load);
    template<typename T>
    void setStateObject(T *object)
    {
        setState(
            [object] {
                QByteArray bytes;
                QDataStream out(&bytes, QIODevice::WriteOnly);
                out.setVersion(QDataStream::Qt_6_4);
                out << *object;
                return bytes;
            },
            [object](const QByteArray &bytes) -> Result<void> {
                QDataStream in(bytes);
                in.setVersion(QDataStream::Qt_6_4);
                T loaded;
                in >> loaded;
                if (in.status() != QDataStream::Ok || !in.atEnd())
                    return Error(ErrorCode::NoCheckpoint, QStringLiteral("the checkpoint does not hold this state"));
                *object = std::move(loaded);
                return success();
            });
    }

    // Write the state as the next epoch (one above the newest on disk), or
    // as `epoch` (a coordinated checkpoint: every node the same). Errors
    // (CheckpointFailed): no state, the directory cannot be made or written,
    // a full disk; CheckpointInUse: another store holds the directory
    // (lockDirectory()). The previous checkpoint is untouched by any of them.
    Result<quint64> checkpoint();
    Result<quint64> checkpoint(quint64 epoch);
    // Write `state` as `epoch` without the state's producer: a copy of this
    // node's state that a partner kept, handed to a new device (REBUILD).
    // Same durability and errors as checkpoint().
    Result<quint64> importState(quint64 epoch, const QByteArray &state);
    // Load the newest valid checkpoint into the state's consumer, passing
    // over (and saying why) corrupt or incomplete newer ones. NoCheckpoint
    // when none is valid; lockDirectory()'s errors when the directory is
    // not this store's to load from. `atMost`: the newest epoch to consider.
    Result<Restored> restore(quint64 atMost = ~quint64(0));
    // Complete checkpoint files on disk, by epoch, oldest first (not verified).
    QList<quint64> epochs() const;
    // The state saved as `epoch`, verified, without loading it into the
    // state's consumer (what a partner copy sends). NoCheckpoint if the file
    // is missing, incomplete or corrupt, saying which.
    Result<QByteArray> read(quint64 epoch) const;

Q_SIGNALS:
    // A checkpoint is on disk: its epoch, bytes of state and how long the
    // write took (k0 for the checkpoint planner).
    void checkpointed(quint64 epoch, qint64 bytes, double seconds);
    // A checkpoint was loaded, and how long it took (k1).
    void restored(quint64 epoch, qint64 bytes, double seconds);

private:
    QString pathOf(quint64 epoch) const;
    Result<quint64> write(quint64 epoch, const QByteArray &state);
    // `parts` one after the other, durably, under `path` (docs/guide/checkpoints.md).
    Result<void> writeFile(const QString &path, const QList<QByteArray> &parts) const;
    Result<QByteArray> readValid(quint64 epoch) const;
    void prune();

    QString m_directory;
    QString m_noDirectory; // why m_directory is empty, if it is
    std::unique_ptr<QLockFile> m_lock; // held on m_directory once used
    int m_keep = 2;
    Producer m_save;
    Consumer m_load;
};

} // namespace mmpi
