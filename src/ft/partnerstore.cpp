#include <mmpi/ft/partnerstore.h>

#include <mmpi/core/logging.h>

#include <QCryptographicHash>
#include <QtEndian>

#include <cstring>

namespace mmpi {

namespace {

QString copyDirectory(const QString &ownDirectory, int worldRank)
{
    // No directory of its own (a store made before its world gave it a
    // rank): none for the copies either, rather than one at the root.
    if (ownDirectory.isEmpty())
        return {};
    // Not arg() on the directory: a world's part of it may hold '%'.
    return ownDirectory + QStringLiteral("/partners/rank-%1").arg(worldRank);
}

// The newest copy in `directory` that reads back whole.
Result<PartnerStore::Copy> readCopy(const QString &directory, int rank)
{
    CheckpointStore store;
    store.setDirectory(directory);
    const QList<quint64> epochs = store.epochs();
    QStringList problems;
    for (auto it = epochs.crbegin(); it != epochs.crend(); ++it) {
        auto state = store.read(*it);
        if (state)
            return PartnerStore::Copy{*it, *state};
        problems << state.error().message;
    }
    return Error(ErrorCode::NoCheckpoint, problems.isEmpty()
                                              ? QStringLiteral("no copy of rank %1's state here").arg(rank)
                                              : QStringLiteral("no whole copy of rank %1's state: %2")
                                                    .arg(rank)
                                                    .arg(problems.join(u"; ")));
}

// A copy message (docs/guide/checkpoints.md#partner-copies): epoch u64, state size
// u64, block size u32, hash of the whole new state (32), changed blocks u32,
// then per block its index u32, its length u32 and its bytes. An ack: epoch
// u64, stored u8.
constexpr qsizetype CopyHeader = 8 + 8 + 4 + 32 + 4;
constexpr qsizetype BlockHeader = 4 + 4;

QByteArray hashOf(QByteArrayView bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Blake2b_256);
}

QList<QByteArray> blockHashes(const QByteArray &state)
{
    QList<QByteArray> hashes;
    for (qsizetype at = 0; at < state.size(); at += PartnerStore::BlockSize)
        hashes << hashOf(QByteArrayView(state).sliced(at, std::min(PartnerStore::BlockSize, state.size() - at)));
    return hashes;
}

template<typename T>
void put(QByteArray &out, T value)
{
    char bytes[sizeof(T)];
    qToBigEndian<T>(value, bytes);
    out.append(bytes, sizeof(T));
}

// Reads big-endian integers off the front of a message, refusing to run past its end.
class Reader
{
public:
    explicit Reader(const QByteArray &bytes) : m_bytes(bytes) {}
    template<typename T>
    bool take(T &value)
    {
        if (m_at + qsizetype(sizeof(T)) > m_bytes.size())
            return false;
        value = qFromBigEndian<T>(m_bytes.constData() + m_at);
        m_at += sizeof(T);
        return true;
    }
    bool take(qsizetype length, QByteArrayView &view)
    {
        if (length < 0 || m_at + length > m_bytes.size())
            return false;
        view = QByteArrayView(m_bytes).sliced(m_at, length);
        m_at += length;
        return true;
    }
    bool atEnd() const { return m_at == m_bytes.size(); }

private:
    const QByteArray &m_bytes;
    qsizetype m_at = 0;
};

Error malformed(int from, const QString &what)
{
    return {ErrorCode::ProtocolViolation, QStringLiteral("malformed checkpoint copy from rank %1: %2").arg(from).arg(what)};
}

} // namespace

PartnerStore::PartnerStore(const Communicator &comm, CheckpointStore *own, QObject *parent)
    : QObject(parent)
    , m_comm(comm)
    , m_own(own)
    , m_inbox(comm, this, QStringLiteral("partner store"), [this](const Status &status, const Request &request) {
        const auto bytes = request.value<QByteArray>();
        if (bytes && status.tag == m_tagBase + CopyTag)
            handleCopy(status.source, *bytes);
        else if (bytes && status.tag == m_tagBase + AckTag)
            handleAck(status.source, *bytes);
        else
            qCWarning(lcFt) << "partner store: ignoring a message (tag" << status.tag << ") from rank" << status.source;
    })
{
    connect(own, &CheckpointStore::checkpointed, this, [this](quint64 epoch) { sendCopy(epoch); });
}

PartnerStore::~PartnerStore() = default;

void PartnerStore::setPartnerCount(int k)
{
    m_partnerCount = std::clamp(k, 0, std::max(0, m_comm.size() - 1));
}

QList<int> PartnerStore::partners() const
{
    QList<int> ranks;
    for (int i = 1; i <= m_partnerCount && i < m_comm.size(); ++i)
        ranks << (m_comm.rank() + i) % m_comm.size();
    return ranks;
}

void PartnerStore::sendCopy(quint64 epoch)
{
    if (!m_own)
        return;
    const auto state = m_own->read(epoch);
    if (!state) {
        qCWarning(lcFt).noquote() << "no partner copy of epoch" << epoch << ":" << state.error().message;
        return;
    }
    const QList<QByteArray> hashes = blockHashes(*state);
    for (int partner : partners()) {
        Sent &sent = m_sent[partner];
        QByteArray message;
        put<quint64>(message, epoch);
        put<quint64>(message, quint64(state->size()));
        put<quint32>(message, quint32(BlockSize));
        message.append(hashOf(*state));
        QList<qsizetype> changed;
        for (qsizetype i = 0; i < hashes.size(); ++i)
            if (i >= sent.confirmed.size() || sent.confirmed.at(i) != hashes.at(i))
                changed << i;
        put<quint32>(message, quint32(changed.size()));
        for (qsizetype i : changed) {
            const QByteArrayView block = QByteArrayView(*state).sliced(i * BlockSize, std::min(BlockSize, state->size() - i * BlockSize));
            put<quint32>(message, quint32(i));
            put<quint32>(message, quint32(block.size()));
            message.append(block);
        }
        sent.pending.insert(epoch, hashes);
        m_comm.isend(partner, m_tagBase + CopyTag, message);
        Q_EMIT copySent(partner, epoch, message.size(), state->size());
    }
}

void PartnerStore::handleCopy(int from, const QByteArray &message)
{
    quint64 epoch = 0;
    const auto state = apply(from, message, epoch);
    bool stored = false;
    if (!state) {
        qCWarning(lcFt).noquote() << state.error().message;
    } else {
        m_toWrite.insert(from, *state);
        if (const auto kept = storeOf(from)->checkpoint(epoch); !kept) {
            qCWarning(lcFt).noquote() << "cannot keep rank" << from << "'s copy of epoch" << epoch << ":"
                                      << kept.error().message;
        } else {
            m_held.insert(from, *state);
            stored = true;
            Q_EMIT copyStored(from, epoch, state->size());
        }
    }
    m_toWrite.remove(from);
    QByteArray ack;
    put<quint64>(ack, epoch);
    ack.append(char(stored ? 1 : 0));
    m_comm.isend(from, m_tagBase + AckTag, ack);
}

// The sender's new state: the blocks that came, over the state held before.
// Checked against the hash of the whole, so a lost earlier copy shows.
Result<QByteArray> PartnerStore::apply(int from, const QByteArray &message, quint64 &epoch)
{
    Reader in(message);
    quint64 size = 0;
    quint32 blockSize = 0, count = 0;
    QByteArrayView hash;
    if (!in.take(epoch) || !in.take(size) || !in.take(blockSize) || !in.take(32, hash) || !in.take(count))
        return malformed(from, QStringLiteral("%1 bytes, shorter than its header (%2)").arg(message.size()).arg(CopyHeader));
    if (size > quint64(MaxStateSize) || blockSize != quint32(BlockSize))
        return malformed(from, QStringLiteral("state of %1 bytes in blocks of %2").arg(size).arg(blockSize));
    const quint64 blocks = (size + BlockSize - 1) / BlockSize;
    if (count > blocks || qsizetype(count) * BlockHeader > message.size())
        return malformed(from, QStringLiteral("%1 changed blocks of %2").arg(count).arg(blocks));
    if (!m_held.contains(from))
        if (const auto copy = copyOf(from))
            m_held.insert(from, copy->state);
    QByteArray state = m_held.value(from);
    state.resize(qsizetype(size));
    for (quint32 n = 0; n < count; ++n) {
        quint32 index = 0, length = 0;
        QByteArrayView block;
        if (!in.take(index) || !in.take(length) || !in.take(qsizetype(length), block))
            return malformed(from, QStringLiteral("block %1 of %2 is cut short").arg(n).arg(count));
        const quint64 at = quint64(index) * BlockSize;
        if (index >= blocks || length > BlockSize || at + length > size)
            return malformed(from, QStringLiteral("block %1 of %2 bytes lies outside the state").arg(index).arg(length));
        std::memcpy(state.data() + at, block.data(), length);
    }
    if (!in.atEnd())
        return malformed(from, QStringLiteral("bytes after the last block"));
    if (hashOf(state) != hash)
        return Error(ErrorCode::NoCheckpoint,
                     QStringLiteral("rank %1's copy of epoch %2 does not add up (an earlier copy is missing here): "
                                    "asking for a whole one")
                         .arg(from)
                         .arg(epoch));
    return state;
}

void PartnerStore::handleAck(int from, const QByteArray &message)
{
    Reader in(message);
    quint64 epoch = 0;
    quint8 stored = 0;
    if (!in.take(epoch) || !in.take(stored) || !in.atEnd() || !m_sent.contains(from))
        return;
    Sent &sent = m_sent[from];
    // Stored: the partner holds these blocks. Not: it holds who knows what,
    // so the next copy goes whole.
    sent.confirmed = stored ? sent.pending.value(epoch) : QList<QByteArray>();
    for (auto it = sent.pending.begin(); it != sent.pending.end();)
        it = it.key() <= epoch ? sent.pending.erase(it) : std::next(it);
    Q_EMIT copyAcknowledged(from, epoch, stored != 0);
}

QString PartnerStore::directoryOf(int rank) const
{
    return copyDirectory(m_own ? m_own->directory() : QString(), m_comm.worldRank(rank));
}

// A store per sender, whose state is what apply() produced last.
CheckpointStore *PartnerStore::storeOf(int rank)
{
    auto &store = m_copies[rank];
    if (!store) {
        store = std::make_shared<CheckpointStore>();
        store->setDirectory(directoryOf(rank));
    }
    store->setState([this, rank] { return m_toWrite.value(rank); }, [](const QByteArray &) { return success(); });
    return store.get();
}

Result<PartnerStore::Copy> PartnerStore::copyOf(int rank) const
{
    return readCopy(directoryOf(rank), rank);
}

Result<PartnerStore::Copy> PartnerStore::copyOf(const CheckpointStore &own, int worldRank)
{
    return readCopy(copyDirectory(own.directory(), worldRank), worldRank);
}

} // namespace mmpi
