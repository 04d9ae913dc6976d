#include <mmpi/world/adaptivespin.h>

#include <algorithm>

namespace mmpi {

namespace {
constexpr AdaptiveSpin::Duration Longest{1000000};
} // namespace

void AdaptiveSpin::configure(Duration base, Duration most)
{
    m_base = std::clamp(base, Duration{0}, Longest);
    m_most = m_base.count() > 0 ? std::clamp(most, m_base, Longest) : Duration{0};
    m_budget = m_base;
}

// Twice the wait, so that the next one, a little longer, still ends spinning;
// halving (not a reset) lets one long pause in a busy exchange cost little.
void AdaptiveSpin::record(Duration waited)
{
    if (m_base.count() <= 0)
        return;
    if (waited > m_most)
        m_budget = std::max(m_base, m_budget / 2);
    else if (waited > m_budget)
        m_budget = std::min(m_most, 2 * waited);
}

} // namespace mmpi
