#include "lineforwarder.h"

#include <utility>

namespace mmpi::tools {

LineForwarder::LineForwarder(QByteArray prefix, std::FILE *sink)
    : m_prefix(std::move(prefix)), m_sink(sink)
{
}

void LineForwarder::append(const QByteArray &data)
{
    m_pending += data;
    QByteArray out;
    qsizetype start = 0;
    while (start < m_pending.size()) {
        const qsizetype newline = m_pending.indexOf('\n', start);
        const qsizetype available = (newline < 0 ? m_pending.size() : newline) - start;
        if (newline < 0 && available < MaxLineLength)
            break;
        const qsizetype length = qMin(available, MaxLineLength);
        out += m_prefix;
        out += QByteArrayView(m_pending).sliced(start, length);
        out += '\n';
        // Skip the newline only if this piece ended at it.
        start += length + (length == available && newline >= 0 ? 1 : 0);
    }
    m_pending.remove(0, start);
    write(out);
}

void LineForwarder::flush()
{
    if (m_pending.isEmpty())
        return;
    write(m_prefix + m_pending + '\n');
    m_pending.clear();
}

void LineForwarder::write(const QByteArray &lines)
{
    if (lines.isEmpty())
        return;
    // One batch of whole lines, flushed at once: mmpirun is the only writer of
    // its streams and writes them from one thread, so lines stay whole.
    std::fwrite(lines.constData(), 1, size_t(lines.size()), m_sink);
    std::fflush(m_sink);
}

} // namespace mmpi::tools
