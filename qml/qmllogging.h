// The logging category of the QML module (mmpi.qml): what the QML types
// refuse or give up on, for the developer reading the app's log.
#pragma once

#include <QLoggingCategory>

namespace mmpi {
Q_DECLARE_LOGGING_CATEGORY(lcQml)
}
