#include <mmpi/core/logging.h>

namespace mmpi {
Q_LOGGING_CATEGORY(lcWire, "mmpi.wire", QtInfoMsg)
Q_LOGGING_CATEGORY(lcTransport, "mmpi.transport", QtInfoMsg)
Q_LOGGING_CATEGORY(lcWorld, "mmpi.world", QtInfoMsg)
Q_LOGGING_CATEGORY(lcTools, "mmpi.tools", QtInfoMsg)
} // namespace mmpi
