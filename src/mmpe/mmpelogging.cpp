#include "mmpelogging.h"

namespace mmpi {
Q_LOGGING_CATEGORY(lcMmpe, "mmpi.mmpe", QtWarningMsg)
} // namespace mmpi
