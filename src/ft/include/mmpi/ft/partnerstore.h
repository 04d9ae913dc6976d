// mmpi::PartnerStore: each node's checkpoints also kept by partner nodes, so
// that the state of a node whose device died survives it (what REBUILD
// restores). Copies are incremental: only the blocks that changed since the
// copy the partner confirmed travel, as the MMPI paper recommends over slow
// radios (docs/guide/checkpoints.md#partner-copies).
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>
#include <mmpi/ft/checkpointstore.h>

#include <QHash>
#include <QObject>
#include <QPointer>

#include <memory>

namespace mmpi {

class PartnerStore : public QObject
{
    Q_OBJECT
public:
    static constexpr int DefaultTagBase = 0x7ffe0000;
    static constexpr qsizetype BlockSize = 64 * 1024;
    // The largest state a partner takes (a lying sender cannot make it allocate more).
    static constexpr qint64 MaxStateSize = 1024LL * 1024 * 1024;

    // Copies go between the members of `comm` (give it one of its own, e.g.
    // from dup(): the store receives on it with AnySource). Every checkpoint
    // `own` writes goes to the partners; partners' copies are kept under
    // own->directory()/partners/rank-<world rank>, each directory locked
    // (CheckpointStore::lockDirectory()) while this object keeps copies
    // there. Every member makes one.
    PartnerStore(const Communicator &comm, CheckpointStore *own, QObject *parent = nullptr);
    ~PartnerStore() override;
    // How many partners keep this node's copies: the next k ranks. Default 1.
    void setPartnerCount(int k);
    QList<int> partners() const;

    // Send this node's checkpoint `epoch` to its partners (done by itself
    // for every checkpoint `own` writes).
    void sendCopy(quint64 epoch);

    struct Copy
    {
        quint64 epoch = 0;
        QByteArray state;
    };
    // The newest whole copy this node holds of `rank`'s state (a rank of the
    // communicator). Read from disk: it outlives this object and the process.
    Result<Copy> copyOf(int rank) const;
    // The same without a PartnerStore: the newest whole copy of world rank
    // `worldRank`'s state kept beside `own` (what a new PartnerStore on
    // `own` would find), e.g. after the communicator it was made on is gone.
    static Result<Copy> copyOf(const CheckpointStore &own, int worldRank);

Q_SIGNALS:
    // `bytes` is what travelled: the changed blocks and a header.
    void copySent(int partner, quint64 epoch, qint64 bytes, qint64 stateBytes);
    void copyAcknowledged(int partner, quint64 epoch, bool stored);
    void copyStored(int from, quint64 epoch, qint64 stateBytes);

private:
    enum Tag { CopyTag, AckTag };
    struct Sent
    {
        QList<QByteArray> confirmed; // block hashes of the copy the partner holds
        QHash<quint64, QList<QByteArray>> pending; // by epoch, until acknowledged
    };
    void handleCopy(int from, const QByteArray &message);
    void handleAck(int from, const QByteArray &message);
    Result<QByteArray> apply(int from, const QByteArray &message, quint64 &epoch);
    QString directoryOf(int rank) const;
    CheckpointStore *storeOf(int rank);

    Communicator m_comm;
    QPointer<CheckpointStore> m_own;
    int m_partnerCount = 1;
    int m_tagBase = DefaultTagBase;
    QHash<int, Sent> m_sent;                 // by partner rank
    QHash<int, QByteArray> m_held;           // the last state held of each sender
    QHash<int, QByteArray> m_toWrite;        // a copy being written to its store
    QHash<int, std::shared_ptr<CheckpointStore>> m_copies;
    MessageListener m_inbox; // last: it may deliver as soon as it is made
};

} // namespace mmpi
