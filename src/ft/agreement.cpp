#include "agreement.h"

#include <mmpi/core/logging.h>

#include <algorithm>

namespace mmpi::detail {

namespace {

QList<int> ranksFrom(const QList<qint64> &items, qsizetype from)
{
    QList<int> ranks;
    for (qsizetype i = from; i < items.size(); ++i)
        ranks.append(int(items.at(i)));
    return ranks;
}

} // namespace

Agreement::Agreement(const Communicator &control, Chooser choose, QObject *parent)
    : QObject(parent)
    , m_control(control)
    , m_choose(std::move(choose))
    , m_inbox(control, this, QStringLiteral("agreement"), [this](const Status &status, const Request &request) {
        if (const auto items = request.value<QList<qint64>>(); items && !items->isEmpty())
            handleMessage(status.source, status.tag, *items);
        else
            qCWarning(lcFt) << "ignoring a malformed agreement message from rank" << status.source;
    })
{
}

Agreement::~Agreement() = default;

void Agreement::retire()
{
    m_retired = true;
    m_active = false;
    m_proposals.clear();
    m_early.clear();
}

void Agreement::handleMessage(int source, int tag, const QList<qint64> &items)
{
    const auto round = quint32(items.at(0));
    if (m_retired) {
        if (tag == ProposeTag && m_decisions.contains(round))
            send(source, DecideTag, encode(m_decisions.value(round)));
        return;
    }
    // A decision stands even if its coordinator failed since (ABORT closes
    // every member's world right after it decides, and this node may hear of
    // the loss first): others have applied it, and a next coordinator would
    // adopt it from them. Only a failed rank's proposal comes too late.
    if (tag == DecideTag && items.size() >= 3)
        return handleDecide({round, ranksFrom(items, 3), Policy(items.at(1)), quint32(items.at(2))});
    if (m_known.contains(source))
        return;
    if (tag == ProposeTag && items.size() >= 2)
        return handlePropose(source, round, items);
    qCWarning(lcFt) << "ignoring agreement message" << tag << "from rank" << source;
}

void Agreement::handlePropose(int source, quint32 round, const QList<qint64> &items)
{
    if (round <= m_round) {
        // Decided here already: the proposer missed it (its coordinator died
        // while telling everyone). The same decision, not a new one.
        if (m_decisions.contains(round))
            send(source, DecideTag, encode(m_decisions.value(round)));
        return;
    }
    if (round > m_round + 1) {
        m_early.append({source, items});
        return;
    }
    m_proposals.insert(source, quint32(items.at(1)));
    learn(ranksFrom(items, 2));
    checkComplete();
}

void Agreement::reportFailure(int rank)
{
    if (rank >= 0 && rank < m_control.size() && rank != m_control.rank())
        learn({rank});
}

void Agreement::learn(const QList<int> &failed)
{
    if (m_retired)
        return;
    bool news = false;
    for (int rank : failed)
        if (rank >= 0 && rank < m_control.size() && rank != m_control.rank() && !m_known.contains(rank)) {
            m_known.insert(rank);
            news = true;
        }
    if (!news && m_active)
        return;
    if (!m_active) {
        m_active = true;
        qCInfo(lcFt) << "agreement round" << m_round + 1 << "starts; failed:" << m_known.values();
    }
    propose();
    checkComplete();
}

void Agreement::propose()
{
    const int me = m_control.rank();
    const int to = coordinator();
    const QList<qint64> items = proposal();
    if (to == me) {
        m_proposals.insert(me, m_control.unusedId());
        // Newly coordinator: ask everyone, which also reaches the members
        // that decided this round with a coordinator that has died since.
        if (m_proposedTo != me)
            for (int rank = 0; rank < m_control.size(); ++rank)
                if (rank != me && !m_known.contains(rank))
                    send(rank, ProposeTag, items);
    } else {
        send(to, ProposeTag, items);
    }
    m_proposedTo = to;
}

void Agreement::checkComplete()
{
    const int me = m_control.rank();
    if (!m_active || coordinator() != me)
        return;
    quint32 id = 0;
    for (int rank = 0; rank < m_control.size(); ++rank) {
        if (m_known.contains(rank))
            continue;
        if (!m_proposals.contains(rank))
            return;
        id = std::max(id, m_proposals.value(rank));
    }
    QList<int> failed = m_known.values();
    std::sort(failed.begin(), failed.end());
    const Decision decision{m_round + 1, failed, m_choose(failed), id};
    for (int rank = 0; rank < m_control.size(); ++rank)
        if (rank != me && !m_known.contains(rank))
            send(rank, DecideTag, encode(decision));
    handleDecide(decision);
}

void Agreement::handleDecide(const Decision &decision)
{
    if (decision.round != m_round + 1)
        return;
    m_decisions.insert(decision.round, decision);
    m_round = decision.round;
    m_active = false;
    m_proposals.clear();
    m_proposedTo = NoRank;
    for (int rank : decision.failed)
        if (rank != m_control.rank())
            m_known.insert(rank);
    qCInfo(lcFt) << "agreement round" << decision.round << "decided: failed" << decision.failed << "policy"
                 << decision.policy;
    // Nothing follows an ABORT: the members are closing their worlds.
    const bool more = decision.policy != Policy::Abort && m_known.size() > qsizetype(decision.failed.size());
    Q_EMIT decided(decision);
    if (m_retired)
        return; // applied, and the next round is the next agreement's
    // Failures known here that the decision does not hold: the next round.
    if (more) {
        m_active = true;
        propose();
        checkComplete();
    }
    for (const auto &[source, items] : std::exchange(m_early, {}))
        handleMessage(source, ProposeTag, items);
}

int Agreement::coordinator() const
{
    for (int rank = 0; rank < m_control.size(); ++rank)
        if (!m_known.contains(rank))
            return rank;
    return NoRank;
}

void Agreement::send(int to, int tag, const QList<qint64> &items)
{
    // A member that failed since cannot take it; its failure comes as a report.
    m_control.isend(to, tag, items);
}

QList<qint64> Agreement::proposal() const
{
    QList<qint64> items{qint64(m_round + 1), qint64(m_control.unusedId())};
    for (int rank : m_known)
        items.append(rank);
    return items;
}

QList<qint64> Agreement::encode(const Decision &decision)
{
    QList<qint64> items{qint64(decision.round), qint64(decision.policy), qint64(decision.id)};
    for (int rank : decision.failed)
        items.append(rank);
    return items;
}

} // namespace mmpi::detail
