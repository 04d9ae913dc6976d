// The logging category of the edu.rit.mp compatibility layer, mmpi.mp. It lives
// here rather than in core so that core does not grow with every optional layer.
// Only warnings are on by default: QT_LOGGING_RULES="mmpi.mp.debug=true".
#pragma once

#include <QLoggingCategory>

namespace mmpi::mp {
Q_DECLARE_LOGGING_CATEGORY(lcMp)
} // namespace mmpi::mp
