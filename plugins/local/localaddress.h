// Parsing and printing of local:// addresses ("local://mmpi-1234-9f3a0c1d"):
// the name of a QLocalServer, restricted to characters that are safe in a
// socket file name on every platform.
#pragma once

#include <mmpi/core/result.h>

namespace mmpi {

// The server name in "local://<name>", or BadAddress.
Result<QString> parseLocalAddress(const QString &address);
QString formatLocalAddress(const QString &serverName);

} // namespace mmpi
