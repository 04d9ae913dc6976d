#include <mmpi/transport/arrivaltiming.h>

namespace mmpi {

std::optional<double> ArrivalTiming::noteRead(qint64 bytes, bool midFrame, qint64 nowUs)
{
    if (m_startUs < 0) {
        if (midFrame) {
            m_startUs = nowUs;
            m_bytes = 0;
        }
        return std::nullopt;
    }
    m_bytes += bytes;
    if (midFrame)
        return std::nullopt;
    const qint64 span = nowUs - m_startUs;
    m_startUs = -1;
    if (m_bytes < MinSampleBytes || span < MinSpanUs)
        return std::nullopt;
    return double(m_bytes) * 1e6 / double(span);
}

} // namespace mmpi
