// Times written by people in options and scripts ("3s", "1.5s", "250ms"):
// mmpirun's --kill and the sim transport's --fault events read them alike.
#pragma once

#include <mmpi/core/result.h>

#include <QString>

#include <chrono>

namespace mmpi {

// A day: a longer time in a launch option or a fault script is certainly a typo.
constexpr std::chrono::milliseconds MaxDuration{24LL * 3600 * 1000};

// A number and a unit with nothing between them, so that "3" (which unit?)
// and "3 s" are refused rather than guessed at; BadConfiguration naming
// `what` ("the time", "the duration") otherwise.
Result<std::chrono::milliseconds> parseDuration(const QString &token, const QString &what = QStringLiteral("the time"));

} // namespace mmpi
