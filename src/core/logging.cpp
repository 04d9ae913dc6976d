#include <mmpi/core/logging.h>

namespace mmpi {
Q_LOGGING_CATEGORY(lcWire, "mmpi.wire", QtWarningMsg)
Q_LOGGING_CATEGORY(lcTransport, "mmpi.transport", QtWarningMsg)
Q_LOGGING_CATEGORY(lcWorld, "mmpi.world", QtWarningMsg)
Q_LOGGING_CATEGORY(lcComm, "mmpi.comm", QtWarningMsg)
Q_LOGGING_CATEGORY(lcFt, "mmpi.ft", QtWarningMsg)
Q_LOGGING_CATEGORY(lcTools, "mmpi.tools", QtWarningMsg)
} // namespace mmpi
