// mmpirun: starts N MMPI nodes on this machine (docs/guide/mmpirun.md).
#include "launchenvironment.h"
#include "launcher.h"
#include "launchoptions.h"

#include <QCoreApplication>

#include <cstdio>

using namespace mmpi::tools;

namespace {

constexpr int UsageStatus = 2;
constexpr int LauncherFailedStatus = 125;

int fail(const QString &message, int status)
{
    std::fprintf(stderr, "mmpirun: %s\n", qPrintable(message));
    if (status == UsageStatus)
        std::fputs("Run 'mmpirun --help' for usage.\n", stderr);
    return status;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("mmpirun"));
    QCoreApplication::setApplicationVersion(QStringLiteral(MMPI_VERSION));

    auto options = parseLaunchOptions(QCoreApplication::arguments(), QCoreApplication::applicationDirPath());
    if (!options)
        return fail(options.error().message, UsageStatus);
    if (options->action == LaunchOptions::Action::ShowHelp) {
        std::fputs(qPrintable(launchHelpText()), stdout);
        return 0;
    }
    if (options->action == LaunchOptions::Action::ShowVersion) {
        std::printf("mmpirun %s\n", MMPI_VERSION);
        return 0;
    }
    auto environment = LaunchEnvironment::create(*options);
    if (!environment)
        return fail(environment.error().message, LauncherFailedStatus);

    Launcher launcher(std::move(*options), std::move(environment).value());
    QObject::connect(&launcher, &Launcher::finished, &app, &QCoreApplication::exit);
    // Started from the event loop, so that a job that ends at once still ends exec().
    QMetaObject::invokeMethod(&launcher, &Launcher::start, Qt::QueuedConnection);
    return app.exec();
}
