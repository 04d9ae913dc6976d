// Logging categories of MMPI, one per layer, so users can turn on exactly the
// layer they debug: QT_LOGGING_RULES="mmpi.world.debug=true". Only warnings
// are on by default: a library should not chat on a user's terminal.
#pragma once

#include <QLoggingCategory>

namespace mmpi {
Q_DECLARE_LOGGING_CATEGORY(lcWire)
Q_DECLARE_LOGGING_CATEGORY(lcTransport)
Q_DECLARE_LOGGING_CATEGORY(lcWorld)
Q_DECLARE_LOGGING_CATEGORY(lcComm)
Q_DECLARE_LOGGING_CATEGORY(lcFt)
Q_DECLARE_LOGGING_CATEGORY(lcTools)
} // namespace mmpi
