// The MMPE layer's logging category, kept inside the layer: core's list of
// categories belongs to the layers below. Enable with
// QT_LOGGING_RULES="mmpi.mmpe.debug=true".
#pragma once

#include <QLoggingCategory>

namespace mmpi {
Q_DECLARE_LOGGING_CATEGORY(lcMmpe)
} // namespace mmpi
