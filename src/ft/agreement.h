// Agreement: the surviving members of a communicator agree on which members
// failed, and on the policy, before any of them acts; it tolerates further
// failures while it runs, the coordinator's included (docs/guide/fault-tolerance.md
// #agreement). The coordinator is the lowest member nobody reported failed;
// every member proposes what it knows to it, it decides once every member it
// believes alive has proposed, and tells them. A member that has decided a
// round answers later proposals of that round with the decision, so a new
// coordinator never decides differently from one that died mid-broadcast;
// once retired (its communicator replaced after SHRINK or REBUILD) it does
// only that, for the members still waiting on the old communicator.
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>
#include <mmpi/ft/policy.h>
#include <mmpi/wire/frame.h>

#include <QHash>
#include <QObject>
#include <QSet>

#include <functional>

namespace mmpi::detail {

class Agreement : public QObject
{
    Q_OBJECT
public:
    struct Decision
    {
        quint32 round = 0;
        QList<int> failed; // ranks of the communicator, every one failed so far
        Policy policy = Policy::Blank;
        quint32 id = 0; // an id no member uses, for the communicators that follow
    };
    using Chooser = std::function<Policy(const QList<int> &failed)>;

    // `control` is this agreement's own communicator (nothing else uses it).
    Agreement(const Communicator &control, Chooser choose, QObject *parent = nullptr);
    ~Agreement() override;

    // A member (rank of the control communicator) failed, as seen here.
    void reportFailure(int rank);
    // A round although nothing new failed (FaultTolerance::reconfigure());
    // nothing if one is under way.
    void requestRound() { learn({}); }
    // Take the messages that have arrived but wait in the event queue, before
    // a loss report: a decision among them must not be decided over again.
    void deliverPending() { m_inbox.deliverPending(); }
    // Its decision was applied and a new agreement took over: from now on it
    // decides nothing and emits nothing, and only answers a proposal of a
    // round it decided with that decision. A member whose coordinator died
    // while telling everyone asks the next one, which may have moved on.
    void retire();
    const Communicator &control() const { return m_control; }

Q_SIGNALS:
    void decided(const mmpi::detail::Agreement::Decision &decision);

private:
    enum Tag { ProposeTag = 1, DecideTag = 2 };
    void handleMessage(int source, int tag, const QList<qint64> &items);
    void handlePropose(int source, quint32 round, const QList<qint64> &items);
    void handleDecide(const Decision &decision);
    void learn(const QList<int> &failed);
    void propose();
    void checkComplete();
    int coordinator() const;
    void send(int to, int tag, const QList<qint64> &items);
    QList<qint64> proposal() const;
    static QList<qint64> encode(const Decision &decision);

    Communicator m_control;
    Chooser m_choose;
    QSet<int> m_known;           // failed members known here
    quint32 m_round = 0;         // rounds decided
    QHash<quint32, Decision> m_decisions;
    bool m_active = false;       // a round is under way here
    bool m_retired = false;
    int m_proposedTo = mmpi::NoRank; // where this round's proposal went
    QHash<int, quint32> m_proposals; // coordinator: member -> its unused id
    QList<std::pair<int, QList<qint64>>> m_early; // proposals of later rounds
    MessageListener m_inbox; // last: it may deliver as soon as it is made
};

} // namespace mmpi::detail

Q_DECLARE_METATYPE(mmpi::detail::Agreement::Decision)
