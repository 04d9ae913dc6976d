#include <mmpi/transport/transportregistry.h>

#include <mmpi/core/logging.h>
#include <mmpi/transport/transportfactory.h>

#include <QCoreApplication>
#include <QDir>
#include <QJsonObject>
#include <QLibrary>
#include <QMutex>
#include <QPluginLoader>

#include <algorithm>
#include <optional>

namespace mmpi {

namespace {

// One transport plugin, known from its metadata alone: nothing is loaded
// until create() asks for it.
struct PluginEntry
{
    QString name;
    QString fileName;                  // shared plugin; empty for a static one
    QtPluginInstanceFunction instance; // static plugin; null for a shared one
};

struct Catalogue
{
    QStringList searchPaths;
    QList<PluginEntry> plugins;
};

// The transport name in a plugin's metadata, or an empty string if the
// plugin is not an MMPI transport.
QString transportName(const QJsonObject &metaData)
{
    if (metaData.value(QLatin1String("IID")).toString() != QLatin1String(MMPI_TRANSPORT_FACTORY_IID))
        return {};
    return metaData.value(QLatin1String("MetaData")).toObject().value(QLatin1String("name")).toString();
}

bool isKnown(const QList<PluginEntry> &plugins, const QString &name)
{
    return std::any_of(plugins.begin(), plugins.end(), [&](const PluginEntry &e) { return e.name == name; });
}

void addStaticPlugins(QList<PluginEntry> &plugins)
{
    for (const QStaticPlugin &plugin : QPluginLoader::staticPlugins()) {
        const QString name = transportName(plugin.metaData());
        if (!name.isEmpty() && !isKnown(plugins, name))
            plugins.append({name, QString(), plugin.instance});
    }
}

void addSharedPlugins(QList<PluginEntry> &plugins, const QString &directory)
{
    const QFileInfoList files = QDir(directory).entryInfoList(QDir::Files | QDir::Readable, QDir::Name);
    for (const QFileInfo &file : files) {
        if (!QLibrary::isLibrary(file.fileName()))
            continue;
        const QString path = file.absoluteFilePath();
        // metaData() reads the plugin's metadata section without loading it.
        const QString name = transportName(QPluginLoader(path).metaData());
        if (name.isEmpty())
            continue;
        if (isKnown(plugins, name)) {
            qCDebug(lcTransport).noquote() << "ignoring" << path << ": transport" << name
                                           << "was found earlier";
            continue;
        }
        qCDebug(lcTransport).noquote() << "found transport" << name << "in" << path;
        plugins.append({name, path, nullptr});
    }
}

Catalogue scan(const QStringList &searchPaths)
{
    Catalogue catalogue{searchPaths, {}};
    addStaticPlugins(catalogue.plugins);
    for (const QString &directory : searchPaths)
        addSharedPlugins(catalogue.plugins, directory);
    return catalogue;
}

// Scanning opens every file in the search path, so it is done once per set of
// search paths (they change only if MMPI_PLUGIN_PATH does, or once a
// QCoreApplication exists). Callers may be on any thread.
Catalogue catalogue()
{
    static QMutex mutex;
    static std::optional<Catalogue> cached;
    const QStringList paths = TransportRegistry::searchPaths();
    QMutexLocker lock(&mutex);
    if (!cached || cached->searchPaths != paths)
        cached = scan(paths);
    return *cached;
}

QStringList names(const QList<PluginEntry> &plugins)
{
    QStringList result;
    for (const PluginEntry &entry : plugins)
        result << entry.name;
    result.sort();
    return result;
}

Error unknownTransport(const QString &name, const Catalogue &catalogue)
{
    const QStringList available = names(catalogue.plugins);
    return Error(ErrorCode::UnknownTransport,
                 QStringLiteral("unknown transport '%1'; available: %2 (searched: %3)")
                     .arg(name,
                          available.isEmpty() ? QStringLiteral("none") : available.join(QStringLiteral(", ")),
                          catalogue.searchPaths.join(QStringLiteral(", "))));
}

Result<QObject *> instantiate(const PluginEntry &entry)
{
    if (entry.instance)
        return entry.instance();
    QPluginLoader loader(entry.fileName);
    if (QObject *object = loader.instance())
        return object; // the library stays loaded for the rest of the process
    return Error(ErrorCode::PluginLoadFailed, QStringLiteral("cannot load transport '%1' from %2: %3")
                                                  .arg(entry.name, entry.fileName, loader.errorString()));
}

} // namespace

QStringList TransportRegistry::availableTransports()
{
    return names(catalogue().plugins);
}

QStringList TransportRegistry::searchPaths()
{
    QStringList paths;
    const QString fromEnvironment = qEnvironmentVariable("MMPI_PLUGIN_PATH");
    for (const QString &dir : fromEnvironment.split(QDir::listSeparator(), Qt::SkipEmptyParts))
        paths << QDir::cleanPath(dir);
    // applicationDirPath() needs (and warns without) an application object.
    // The build tree keeps its plugins in lib/; an install may use another
    // library directory (lib/x86_64-linux-gnu).
    if (QCoreApplication::instance()) {
        const QString bin = QCoreApplication::applicationDirPath();
        paths << QDir::cleanPath(bin + QStringLiteral("/../lib/mmpi/plugins"));
        paths << QDir::cleanPath(bin + QStringLiteral("/" MMPI_PLUGINS_FROM_BIN));
    }
    paths.removeDuplicates();
    return paths;
}

Result<Transport *> TransportRegistry::create(const QString &name, QObject *parent)
{
    const Catalogue found = catalogue();
    const auto entry = std::find_if(found.plugins.begin(), found.plugins.end(),
                                    [&](const PluginEntry &e) { return e.name == name; });
    if (entry == found.plugins.end())
        return unknownTransport(name, found);
    auto object = instantiate(*entry);
    if (!object)
        return object.error();
    auto *factory = qobject_cast<TransportFactory *>(*object);
    if (!factory)
        return Error(ErrorCode::PluginLoadFailed,
                     QStringLiteral("plugin of transport '%1' is not a transport factory").arg(name));
    Transport *transport = factory->create(parent);
    if (!transport)
        return Error(ErrorCode::PluginLoadFailed,
                     QStringLiteral("transport '%1' cannot run on this device").arg(name));
    return transport;
}

} // namespace mmpi
