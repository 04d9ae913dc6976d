// mmpi::AdaptiveSpin: how long a thread blocked on a message polls before it
// sleeps (docs/reference/worldconfig.md#fields). It starts at WorldConfig::waitSpin and
// learns from the thread's waits: one that ended soon after the thread had
// gone to sleep raises the budget to cover it, since such a thread pays a
// wake-up for every message; one longer than the most it may spin lowers it
// again, so that an idle thread soon sleeps at once.
#pragma once

#include <chrono>

namespace mmpi {

class AdaptiveSpin
{
public:
    using Duration = std::chrono::microseconds;

    // Starts again at `base`; budgets grow up to `most` (no higher than 1 s).
    // A base of 0 turns spinning off, learning included.
    void configure(Duration base, Duration most);
    bool isConfiguredFor(Duration base, Duration most) const { return base == m_base && most == m_most; }
    // How long the next wait may poll without sleeping.
    Duration budget() const { return m_budget; }
    // A wait took `waited` from its start to its message (or its end).
    void record(Duration waited);

private:
    Duration m_base{0};
    Duration m_most{0};
    Duration m_budget{0};
};

} // namespace mmpi
