// SimFault: one scripted fault event of the sim transport, e.g.
// "rank 2 out-of-range at 3s for 4s", parsed strictly from its text form. The
// grammar and what each kind does: docs/guide/transports.md, "sim".
#pragma once

#include <mmpi/core/result.h>

#include <chrono>

namespace mmpi {

struct SimFault
{
    enum class Kind { IoError, OutOfRange, Terminates };

    static constexpr int MaxRank = 4095;

    int rank = 0;
    Kind kind = Kind::IoError;
    // From the moment the transport was configured with the fault.
    std::chrono::milliseconds at{0};
    // OutOfRange only: how long the node stays out of range.
    std::chrono::milliseconds duration{0};
    // The text it was parsed from, for log lines and error messages.
    QString text;

    // BadConfiguration naming the fault and what is wrong with it.
    static Result<SimFault> parse(const QString &text);
    static QString grammar();
};

} // namespace mmpi
