#include <mmpi/mp/logging.h>

namespace mmpi::mp {
Q_LOGGING_CATEGORY(lcMp, "mmpi.mp", QtWarningMsg)
} // namespace mmpi::mp
