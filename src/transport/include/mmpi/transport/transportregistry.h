// Finds transport plugins by name: static plugins linked into the app first
// (the standard transports, through MMPI::transports), then shared plugins in
// MMPI_PLUGIN_PATH and beside the app (<app dir>/../lib/mmpi/plugins). Asking
// for an unknown name is an error that lists the available transports.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/transport/transport.h>

#include <QStringList>

namespace mmpi {

class TransportRegistry
{
public:
    // Names of every transport that can be loaded, sorted.
    static QStringList availableTransports();
    // Directories searched for shared plugins, in order.
    static QStringList searchPaths();
    // A new transport of that name, owned by `parent` (or the caller).
    // Errors: UnknownTransport (with the list), PluginLoadFailed (with the
    // loader's reason).
    static Result<Transport *> create(const QString &name, QObject *parent = nullptr);
};

} // namespace mmpi
