#include "qmllogging.h"

namespace mmpi {
Q_LOGGING_CATEGORY(lcQml, "mmpi.qml")
}
