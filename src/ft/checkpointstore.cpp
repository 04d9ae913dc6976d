#include <mmpi/ft/checkpointstore.h>

#include <mmpi/core/logging.h>
#include <mmpi/world/world.h>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLockFile>
#include <QMetaEnum>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QSysInfo>
#include <QUrl>
#include <QtEndian>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace mmpi {

namespace {

// File layout (docs/guide/checkpoints.md): magic, format version, epoch, state
// length, BLAKE2b-256 of everything before it and of the state, then the state.
constexpr char Magic[8] = {'M', 'M', 'P', 'I', 'C', 'K', 'P', 'T'};
constexpr quint32 FormatVersion = 1;
constexpr qsizetype HashOffset = 28;
constexpr qsizetype HeaderSize = HashOffset + 32;
const QString Suffix = QStringLiteral(".mmpi-ckpt");
const QString TempSuffix = QStringLiteral(".tmp");
const QString LockName = QStringLiteral(".lock");
// A world name longer than this (encoded) is cut and a hash of the whole
// added: file names end at 255 bytes, and two long names that share their
// start must still get two directories.
constexpr qsizetype MaxWorldPart = 120;

Error failure(const QString &what, int error)
{
    return {ErrorCode::CheckpointFailed, QStringLiteral("%1: %2").arg(what, QString::fromLocal8Bit(std::strerror(error)))};
}

QByteArray hashOf(const QByteArray &header, const QByteArray &state)
{
    // BLAKE2b: as strong as SHA-256 and about 5 times faster in Qt's code (535
    // against 113 MB/s here), which is most of what a checkpoint costs.
    QCryptographicHash hash(QCryptographicHash::Blake2b_256);
    hash.addData(QByteArrayView(header).first(HashOffset));
    hash.addData(state);
    return hash.result();
}

// The header; the state follows it in the file (written from where it is, not copied).
QByteArray headerFor(quint64 epoch, const QByteArray &state)
{
    QByteArray file(HeaderSize, '\0');
    std::memcpy(file.data(), Magic, sizeof Magic);
    qToBigEndian<quint32>(FormatVersion, file.data() + 8);
    qToBigEndian<quint64>(epoch, file.data() + 12);
    qToBigEndian<quint64>(quint64(state.size()), file.data() + 20);
    const QByteArray hash = hashOf(file, state);
    std::memcpy(file.data() + HashOffset, hash.constData(), size_t(hash.size()));
    return file;
}

// The state in `file` if it is a whole, intact checkpoint of `epoch`, else why not.
Result<QByteArray> decode(const QByteArray &file, quint64 epoch)
{
    const auto bad = [](const QString &why) { return Error(ErrorCode::NoCheckpoint, why); };
    if (file.size() < HeaderSize || std::memcmp(file.constData(), Magic, sizeof Magic) != 0)
        return bad(file.size() < HeaderSize ? QStringLiteral("incomplete (%1 bytes, shorter than a header)").arg(file.size())
                                            : QStringLiteral("not a checkpoint file"));
    if (const quint32 version = qFromBigEndian<quint32>(file.constData() + 8); version != FormatVersion)
        return bad(QStringLiteral("format version %1 (this build reads %2)").arg(version).arg(FormatVersion));
    if (const quint64 inside = qFromBigEndian<quint64>(file.constData() + 12); inside != epoch)
        return bad(QStringLiteral("corrupt (it says epoch %1)").arg(inside));
    const quint64 length = qFromBigEndian<quint64>(file.constData() + 20);
    if (length != quint64(file.size() - HeaderSize))
        return bad(QStringLiteral("incomplete (%1 of %2 bytes of state)").arg(file.size() - HeaderSize).arg(length));
    const QByteArray state = file.sliced(HeaderSize);
    if (hashOf(file, state) != QByteArrayView(file).sliced(HashOffset, 32))
        return bad(QStringLiteral("corrupt (checksum mismatch)"));
    return state;
}

// write() until done; false with errno set on failure.
bool writeAll(int fd, const QByteArray &bytes)
{
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.constData() + done, size_t(bytes.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC;
            return false;
        }
        done += n;
    }
    return true;
}

std::optional<quint64> epochOf(const QString &fileName, const QString &suffix)
{
    static const QRegularExpression pattern(QStringLiteral("^checkpoint-(\\d{20})(\\..*)$"));
    const auto match = pattern.match(fileName);
    if (!match.hasMatch() || match.captured(2) != suffix)
        return std::nullopt;
    bool ok = false;
    const quint64 epoch = match.captured(1).toULongLong(&ok);
    return ok ? std::optional(epoch) : std::nullopt;
}

QList<quint64> epochsWith(const QString &directory, const QString &suffix)
{
    QList<quint64> epochs;
    for (const QString &name : QDir(directory).entryList({QStringLiteral("checkpoint-*") + suffix}, QDir::Files))
        if (const auto epoch = epochOf(name, suffix))
            epochs << *epoch;
    std::sort(epochs.begin(), epochs.end());
    return epochs;
}

QString checkpointsRoot()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/checkpoints");
}

// `worldName` as one directory name: a world's name is the app's or the
// launcher's choice (mmpirun-<pid> by default) and may hold '/' or be "..".
QString worldDirectoryName(const QString &worldName)
{
    QString part = QString::fromLatin1(QUrl::toPercentEncoding(worldName));
    if (part == u"." || part == u"..")
        part.replace(u'.', QStringLiteral("%2E"));
    if (part.size() > MaxWorldPart) {
        const QByteArray hash = QCryptographicHash::hash(worldName.toUtf8(), QCryptographicHash::Blake2b_256);
        part = part.first(MaxWorldPart - 33) + u'-' + QString::fromLatin1(hash.toHex().first(32));
    }
    return part;
}

// The node's world rank as the store's directory takes it (see the header),
// or NoRank with the reason.
int rankFor(const World &world, QString *why)
{
    if (world.rank() != NoRank)
        return world.rank();
    // Only while forming is config() what form() was given (before form(),
    // or after a refused configuration, it is the default one).
    if (world.state() == World::State::Forming && world.config().rank != NoRank)
        return world.config().rank;
    if (why)
        *why = world.state() == World::State::Idle
                   ? QStringLiteral("the world is not formed yet (form() was not called), so this node has no rank")
                   : QStringLiteral("the world has not given this node a rank (state %1)")
                         .arg(QString::fromLatin1(QMetaEnum::fromType<World::State>().valueToKey(int(world.state()))));
    return NoRank;
}

Error noDirectory(const QString &why)
{
    return {ErrorCode::CheckpointFailed, QStringLiteral("the store has no directory: %1").arg(why)};
}

} // namespace

CheckpointStore::CheckpointStore(const World &world, const QString &name, QObject *parent)
    : QObject(parent)
{
    QString why;
    m_directory = defaultDirectory(world, name, &why);
    if (m_directory.isEmpty())
        m_noDirectory = why + QStringLiteral(": make the store once it has one, or call setDirectory()");
}

CheckpointStore::CheckpointStore(const QString &name, QObject *parent)
    : QObject(parent)
    , m_directory(defaultDirectory(name))
{
}

// Out of line: the lock file's type is complete only here.
CheckpointStore::~CheckpointStore() = default;

QString CheckpointStore::defaultDirectory(const QString &name)
{
    return checkpointsRoot() + u'/' + name;
}

QString CheckpointStore::defaultDirectory(const World &world, const QString &name, QString *why)
{
    const int rank = rankFor(world, why);
    if (rank == NoRank)
        return {};
    // One arg() call: the world's part may hold '%', which a later one would take for its own.
    return QStringLiteral("%1/%2/rank-%3/%4")
        .arg(checkpointsRoot(), worldDirectoryName(world.config().worldName), QString::number(rank), name);
}

void CheckpointStore::setDirectory(const QString &directory)
{
    if (m_lock && QDir::cleanPath(directory) == QDir::cleanPath(m_directory))
        return; // the same place: keep the lock rather than let another store in between
    m_lock.reset();
    m_directory = directory;
    m_noDirectory = directory.isEmpty() ? QStringLiteral("setDirectory() was given an empty path") : QString();
}

Result<void> CheckpointStore::lockDirectory()
{
    if (m_lock)
        return success();
    if (m_directory.isEmpty())
        return noDirectory(m_noDirectory);
    if (!QDir().mkpath(m_directory))
        return Error(ErrorCode::CheckpointFailed, QStringLiteral("cannot create the directory %1").arg(m_directory));
    const QString path = m_directory + u'/' + LockName;
    auto lock = std::make_unique<QLockFile>(path);
    // The lock lives as long as the store, hours perhaps: an age limit would
    // call a live holder's lock stale. Only a holder that is gone (no such
    // process on this host) makes it stale, which QLockFile checks itself.
    lock->setStaleLockTime(0);
    if (lock->tryLock(0)) {
        m_lock = std::move(lock);
        return success();
    }
    switch (lock->error()) {
    case QLockFile::LockFailedError: {
        qint64 pid = 0;
        QString host, app;
        if (!lock->getLockInfo(&pid, &host, &app))
            return Error(ErrorCode::CheckpointInUse,
                         QStringLiteral("the checkpoint directory %1 is in use: its lock %2 names no holder (a "
                                        "process that died while taking it?); remove the lock file if no store "
                                        "uses the directory")
                             .arg(m_directory, path));
        const bool thisHost = host.isEmpty() || host == QSysInfo::machineHostName();
        const bool here = thisHost && pid == QCoreApplication::applicationPid();
        // QLockFile can tell a dead holder only on its own host.
        const QString elsewhere = thisHost ? QString()
                                           : QStringLiteral(" (another host: whether it still runs cannot be told "
                                                            "from here; remove the lock file if it does not)");
        return Error(ErrorCode::CheckpointInUse,
                     QStringLiteral("the checkpoint directory %1 is in use by %2: pid %3 (%4) on host %5 holds its "
                                    "lock %6%7")
                         .arg(m_directory,
                              here ? QStringLiteral("another store of this process") : QStringLiteral("another store"),
                              QString::number(pid), app.isEmpty() ? QStringLiteral("app unknown") : app, host, path,
                              elsewhere));
    }
    case QLockFile::PermissionError:
        return Error(ErrorCode::CheckpointFailed, QStringLiteral("cannot create the lock file %1: permission denied").arg(path));
    case QLockFile::UnknownError:
    case QLockFile::NoError:
        break;
    }
    return Error(ErrorCode::CheckpointFailed, QStringLiteral("cannot create the lock file %1").arg(path));
}

void CheckpointStore::setKeep(int count)
{
    m_keep = std::max(2, count);
}

void CheckpointStore::setState(Producer save, Consumer load)
{
    m_save = std::move(save);
    m_load = std::move(load);
}

QString CheckpointStore::pathOf(quint64 epoch) const
{
    // Not arg() on the directory: a world's part of it may hold '%'.
    return m_directory + QStringLiteral("/checkpoint-%1").arg(epoch, 20, 10, QLatin1Char('0')) + Suffix;
}

QList<quint64> CheckpointStore::epochs() const
{
    // An empty path would be the current directory.
    return m_directory.isEmpty() ? QList<quint64>() : epochsWith(m_directory, Suffix);
}

Result<quint64> CheckpointStore::checkpoint()
{
    const QList<quint64> existing = epochs();
    return checkpoint(existing.isEmpty() ? 1 : existing.last() + 1);
}

Result<quint64> CheckpointStore::checkpoint(quint64 epoch)
{
    if (!m_save)
        return Error(ErrorCode::CheckpointFailed, QStringLiteral("no state to checkpoint: call setState() first"));
    return write(epoch, m_save());
}

Result<quint64> CheckpointStore::importState(quint64 epoch, const QByteArray &state)
{
    return write(epoch, state);
}

Result<quint64> CheckpointStore::write(quint64 epoch, const QByteArray &state)
{
    QElapsedTimer clock;
    clock.start();
    if (auto locked = lockDirectory(); !locked) {
        qCWarning(lcFt).noquote() << "checkpoint of epoch" << epoch << "refused:" << locked.error().message;
        return locked.error();
    }
    // Made again should someone have removed it since the lock was taken.
    if (!QDir().mkpath(m_directory))
        return Error(ErrorCode::CheckpointFailed, QStringLiteral("cannot create the directory %1").arg(m_directory));
    if (auto written = writeFile(pathOf(epoch), {headerFor(epoch, state), state}); !written) {
        qCWarning(lcFt).noquote() << "checkpoint of epoch" << epoch << "failed:" << written.error().message
                                  << "; the previous checkpoint stays";
        return written.error();
    }
    prune();
    const double seconds = double(clock.nsecsElapsed()) / 1e9;
    qCDebug(lcFt) << "checkpoint of epoch" << epoch << ":" << state.size() << "bytes in" << seconds << "s";
    Q_EMIT checkpointed(epoch, state.size(), seconds);
    return epoch;
}

// A temporary file made durable, then renamed over the final name, then the
// directory made durable: a crash leaves either the old files or the new one.
Result<void> CheckpointStore::writeFile(const QString &path, const QList<QByteArray> &parts) const
{
    qint64 total = 0;
    for (const QByteArray &part : parts)
        total += part.size();
    const QByteArray temp = QFile::encodeName(path + TempSuffix);
    const int fd = ::open(temp.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return failure(QStringLiteral("cannot create %1").arg(QString::fromLocal8Bit(temp)), errno);
    const bool written = std::all_of(parts.begin(), parts.end(), [fd](const QByteArray &part) {
                             return writeAll(fd, part);
                         }) && ::fsync(fd) == 0;
    const int writeError = errno;
    ::close(fd);
    if (!written) {
        ::unlink(temp.constData());
        return failure(QStringLiteral("cannot write %1 (%2 bytes)").arg(QString::fromLocal8Bit(temp), QString::number(total)),
                       writeError);
    }
    if (::rename(temp.constData(), QFile::encodeName(path).constData()) != 0) {
        const int renameError = errno;
        ::unlink(temp.constData());
        return failure(QStringLiteral("cannot rename %1 to %2").arg(QString::fromLocal8Bit(temp), path), renameError);
    }
    if (const int dir = ::open(QFile::encodeName(m_directory).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return success();
}

// Older checkpoints beyond the ones kept, and temporary files a crash left.
void CheckpointStore::prune()
{
    const QList<quint64> complete = epochs();
    for (qsizetype i = 0; i + m_keep < complete.size(); ++i)
        QFile::remove(pathOf(complete.at(i)));
    for (quint64 epoch : epochsWith(m_directory, Suffix + TempSuffix))
        QFile::remove(pathOf(epoch) + TempSuffix);
}

Result<QByteArray> CheckpointStore::read(quint64 epoch) const
{
    auto state = readValid(epoch);
    if (!state)
        return Error(ErrorCode::NoCheckpoint, QStringLiteral("epoch %1: %2").arg(epoch).arg(state.error().message));
    return state;
}

Result<QByteArray> CheckpointStore::readValid(quint64 epoch) const
{
    if (m_directory.isEmpty())
        return Error(ErrorCode::NoCheckpoint, noDirectory(m_noDirectory).message);
    QFile file(pathOf(epoch));
    if (!file.open(QIODevice::ReadOnly))
        return Error(ErrorCode::NoCheckpoint, QStringLiteral("unreadable (%1)").arg(file.errorString()));
    return decode(file.readAll(), epoch);
}

Result<CheckpointStore::Restored> CheckpointStore::restore(quint64 atMost)
{
    if (!m_load)
        return Error(ErrorCode::NoCheckpoint, QStringLiteral("no state to restore into: call setState() first"));
    // Loading another store's checkpoints as this node's own state is how
    // every rank came to hold one rank's state: refused like a write.
    if (auto locked = lockDirectory(); !locked)
        return locked.error();
    QElapsedTimer clock;
    clock.start();
    Restored result;
    QList<quint64> complete = epochs();
    // A temporary file newer than every complete one: a write that never finished.
    const QList<quint64> unfinished = epochsWith(m_directory, Suffix + TempSuffix);
    for (auto it = complete.crbegin(); it != complete.crend(); ++it) {
        const quint64 epoch = *it;
        if (epoch > atMost)
            continue;
        auto state = readValid(epoch);
        auto loaded = state ? m_load(*state) : Result<void>(state.error());
        if (!loaded) {
            result.skipped << QStringLiteral("epoch %1: %2").arg(epoch).arg(loaded.error().message);
            continue;
        }
        result.epoch = epoch;
        result.bytes = state->size();
        result.path = pathOf(epoch);
        break;
    }
    for (quint64 epoch : unfinished)
        if (epoch > result.epoch && epoch <= atMost)
            result.skipped << QStringLiteral("epoch %1: incomplete (the write never finished)").arg(epoch);
    for (const QString &line : std::as_const(result.skipped))
        qCWarning(lcFt).noquote() << "checkpoint passed over:" << line;
    if (result.path.isEmpty())
        return Error(ErrorCode::NoCheckpoint,
                     result.skipped.isEmpty()
                         ? QStringLiteral("no checkpoint in %1").arg(m_directory)
                         : QStringLiteral("no valid checkpoint in %1: %2").arg(m_directory, result.skipped.join(u"; ")));
    const double seconds = double(clock.nsecsElapsed()) / 1e9;
    Q_EMIT restored(result.epoch, result.bytes, seconds);
    return result;
}

} // namespace mmpi
