#include "tokenring.h"

#include <mmpi/wire/itemcodec.h>

#include <chrono>

namespace mmpi {

namespace {

qint64 nowMicroseconds()
{
    using namespace std::chrono;
    return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace

TokenRing::TokenRing(World *world, int rounds, QTextStream &out)
    : m_world(world), m_rounds(rounds), m_out(out)
{
    connect(world, &World::frameReceived, this, &TokenRing::handleFrame);
}

void TokenRing::start()
{
    if (m_world->rank() != 0)
        return;
    // The token: the current round, then one stamp per hop; the first stamp
    // is rank 0 handing it out.
    forward({1, 1, 0, 0, 0, nowMicroseconds()});
}

void TokenRing::send(int destination, Tag tag, const QList<qint64> &items)
{
    Frame frame = makeFrame(FrameKind::Data, ItemType::Long, quint32(items.size()),
                            encodeItems<qint64>(items));
    frame.header.tag = tag;
    if (auto sent = m_world->sendFrame(destination, frame); !sent)
        Q_EMIT failed(sent.error().toString());
}

void TokenRing::handleFrame(const Frame &frame)
{
    if (frame.header.tag == DoneTag)
        return Q_EMIT finished();
    auto items = decodeItems<qint64>(frame.header.itemType, frame.header.count, frame.payload);
    if (!items || items->size() < 1 + StampSize || (items->size() - 1) % StampSize != 0)
        return Q_EMIT failed(QStringLiteral("malformed token from rank %1").arg(frame.header.source));
    QList<qint64> token = *items;
    const qint64 round = token.at(0);
    const qint64 value = token.at(token.size() - 2);
    // Every receiver adds its rank + 1, so the value proves who saw it.
    token << round << frame.header.source << m_world->rank() << value + m_world->rank() + 1
          << nowMicroseconds();
    if (m_world->rank() == 0 && round >= m_rounds)
        return finish(token);
    if (m_world->rank() == 0)
        token[0] = round + 1;
    forward(token);
}

void TokenRing::forward(QList<qint64> token)
{
    send((m_world->rank() + 1) % m_world->size(), TokenTag, token);
}

void TokenRing::finish(const QList<qint64> &token)
{
    printTable(token);
    for (int rank = 1; rank < m_world->size(); ++rank)
        send(rank, DoneTag, {});
    Q_EMIT finished();
}

void TokenRing::printTable(const QList<qint64> &token) const
{
    const qint64 t0 = token.at(StampSize);
    m_out << QStringLiteral("Token ring of %1 node(s), %2 round(s)\n").arg(m_world->size()).arg(m_rounds);
    m_out << "round  hop  from -> to    token    at (ms)   hop (ms)\n";
    qint64 previous = t0;
    const int stamps = int(token.size() - 1) / StampSize;
    for (int i = 1; i < stamps; ++i) {
        const qint64 *s = token.constData() + 1 + i * StampSize;
        m_out << QStringLiteral("%1 %2 %3 -> %4 %5 %6 %7\n")
                     .arg(s[0], 5)
                     .arg(i, 4)
                     .arg(s[1], 5)
                     .arg(s[2], -3)
                     .arg(s[3], 7)
                     .arg((s[4] - t0) / 1000.0, 10, 'f', 3)
                     .arg((s[4] - previous) / 1000.0, 10, 'f', 3);
        previous = s[4];
    }
    const double total = (previous - t0) / 1000.0;
    m_out << QStringLiteral("%1 hops in %2 ms (%3 ms per hop)\n")
                 .arg(stamps - 1)
                 .arg(total, 0, 'f', 3)
                 .arg(total / std::max(1, stamps - 1), 0, 'f', 3);
    m_out.flush();
}

} // namespace mmpi
