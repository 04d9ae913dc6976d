// mmpi::CheckpointStore: user-directed checkpoints of this node's state on
// persistent storage, written so that a crash at any moment leaves the newest
// complete checkpoint readable: write, flush, fsync, atomic rename, the
// previous one kept until the new one is complete (docs/checkpoints.md).
#pragma once

#include <mmpi/core/result.h>

#include <QDataStream>
#include <QIODevice>
#include <QObject>
#include <QStringList>

#include <functional>

namespace mmpi {

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

    // Checkpoints go to `directory` (created when needed); by default
    // QStandardPaths::AppDataLocation/checkpoints/<name>, which is the app's
    // private storage on Android too.
    explicit CheckpointStore(const QString &name = QStringLiteral("default"), QObject *parent = nullptr);
    void setDirectory(const QString &directory);
    QString directory() const { return m_directory; }
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
    // a full disk; the previous checkpoint is untouched by any of them.
    Result<quint64> checkpoint();
    Result<quint64> checkpoint(quint64 epoch);
    // Write `state` as `epoch` without the state's producer: a copy of this
    // node's state that a partner kept, handed to a new device (REBUILD).
    // Same durability and errors as checkpoint().
    Result<quint64> importState(quint64 epoch, const QByteArray &state);
    // Load the newest valid checkpoint into the state's consumer, passing
    // over (and saying why) corrupt or incomplete newer ones. NoCheckpoint
    // when none is valid. `atMost`: the newest epoch to consider.
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
    // `parts` one after the other, durably, under `path` (docs/checkpoints.md).
    Result<void> writeFile(const QString &path, const QList<QByteArray> &parts) const;
    Result<QByteArray> readValid(quint64 epoch) const;
    void prune();

    QString m_directory;
    int m_keep = 2;
    Producer m_save;
    Consumer m_load;
};

} // namespace mmpi
