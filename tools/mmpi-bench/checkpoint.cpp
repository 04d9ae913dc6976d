#include "checkpoint.h"

#include <mmpi/ft/checkpointstore.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

#include <algorithm>
#include <cstdio>

namespace mmpi::bench {

namespace {

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    return n == 0 ? 0 : n % 2 ? values.at(n / 2) : (values.at(n / 2 - 1) + values.at(n / 2)) / 2;
}

// dd's own report of writing `bytes` with an fsync at the end, in MB/s; 0
// when dd is missing or says something unexpected.
double ddMegabytesPerSecond(const QString &directory, qint64 bytes)
{
    const QString file = directory + QStringLiteral("/mmpi-bench-dd");
    const qint64 blocks = std::max<qint64>(1, bytes / (1024 * 1024));
    const qint64 blockSize = bytes >= 1024 * 1024 ? 1024 * 1024 : bytes;
    QProcess dd;
    dd.start(QStringLiteral("dd"), {QStringLiteral("if=/dev/zero"), QStringLiteral("of=") + file,
                                     QStringLiteral("bs=%1").arg(blockSize), QStringLiteral("count=%1").arg(blocks),
                                     QStringLiteral("conv=fsync")});
    const bool ran = dd.waitForFinished(120000) && dd.exitCode() == 0;
    QFile::remove(file);
    if (!ran)
        return 0;
    // "1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.0123 s, 85.2 MB/s"
    static const QRegularExpression report(QStringLiteral("(\\d+) bytes.* copied, ([\\d.]+) s"));
    const auto m = report.match(QString::fromLocal8Bit(dd.readAllStandardError()));
    return m.hasMatch() && m.captured(2).toDouble() > 0 ? m.captured(1).toDouble() / m.captured(2).toDouble() / 1e6 : 0;
}

QList<qint64> parseSizes(const QString &text, bool *ok)
{
    QList<qint64> sizes;
    *ok = true;
    for (const QString &part : text.split(u',', Qt::SkipEmptyParts)) {
        static const QRegularExpression size(QStringLiteral("^(\\d+)([KkMmGg]?)$"));
        const auto m = size.match(part.trimmed());
        if (!m.hasMatch()) {
            *ok = false;
            return {};
        }
        const QString unit = m.captured(2).toUpper();
        sizes << m.captured(1).toLongLong() * (unit == u"K" ? 1024 : unit == u"M" ? 1024 * 1024 : unit == u"G" ? 1024LL * 1024 * 1024 : 1);
    }
    return sizes;
}

} // namespace

int runCheckpoint(int argc, char **argv)
{
    QCoreApplication *app = QCoreApplication::instance();
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "mmpi-bench checkpoint: k0 (write) and k1 (restore) of mmpi::CheckpointStore per state size,\n"
        "beside dd conv=fsync on the same directory. Restores read through the page cache (warm)."));
    parser.addHelpOption();
    parser.addOption({QStringLiteral("sizes"), QStringLiteral("State sizes, e.g. 64K,1M,16M."), QStringLiteral("LIST"),
                      QStringLiteral("64K,1M,16M,64M")});
    parser.addOption({QStringLiteral("repeat"), QStringLiteral("Checkpoints per size (median)."), QStringLiteral("N"),
                      QStringLiteral("5")});
    parser.addOption({QStringLiteral("dir"), QStringLiteral("Directory (default: the store's, in AppDataLocation)."),
                      QStringLiteral("DIR")});
    parser.addOption({QStringLiteral("json"), QStringLiteral("One JSON line.")});
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    if (!parser.parse(args)) {
        std::fprintf(stderr, "mmpi-bench checkpoint: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::printf("%s", qPrintable(parser.helpText()));
        return 0;
    }
    bool ok = false;
    const QList<qint64> sizes = parseSizes(parser.value(QStringLiteral("sizes")), &ok);
    const int repeat = parser.value(QStringLiteral("repeat")).toInt();
    if (!ok || sizes.isEmpty() || repeat < 1) {
        std::fprintf(stderr, "mmpi-bench checkpoint: bad --sizes or --repeat\n");
        return 2;
    }
    Q_UNUSED(app);
    CheckpointStore store(QStringLiteral("mmpi-bench"));
    if (parser.isSet(QStringLiteral("dir")))
        store.setDirectory(parser.value(QStringLiteral("dir")) + QStringLiteral("/mmpi-bench-checkpoints"));
    QByteArray state;
    store.setState([&state] { return state; }, [](const QByteArray &) { return success(); });

    QStringList rows;
    if (!parser.isSet(QStringLiteral("json")))
        std::printf("checkpoints in %s\n%12s %10s %10s %10s %10s %12s\n", qPrintable(store.directory()), "size",
                    "k0 ms", "write MB/s", "k1 ms", "read MB/s", "dd fsync MB/s");
    for (qint64 size : sizes) {
        state = QByteArray(size, 'c');
        QList<double> writes, reads;
        for (int i = 0; i < repeat; ++i) {
            QElapsedTimer clock;
            clock.start();
            if (auto written = store.checkpoint(); !written) {
                std::fprintf(stderr, "mmpi-bench checkpoint: %s\n", qPrintable(written.error().message));
                return 1;
            }
            writes << double(clock.nsecsElapsed()) / 1e6;
            clock.restart();
            if (auto restored = store.restore(); !restored) {
                std::fprintf(stderr, "mmpi-bench checkpoint: %s\n", qPrintable(restored.error().message));
                return 1;
            }
            reads << double(clock.nsecsElapsed()) / 1e6;
        }
        const double k0 = median(writes), k1 = median(reads);
        const double dd = ddMegabytesPerSecond(store.directory(), size);
        const double mb = double(size) / 1e6;
        if (parser.isSet(QStringLiteral("json")))
            rows << QStringLiteral("{\"size\":%1,\"k0_ms\":%2,\"k1_ms\":%3,\"write_mbps\":%4,\"read_mbps\":%5,\"dd_fsync_mbps\":%6}")
                        .arg(size).arg(k0, 0, 'f', 3).arg(k1, 0, 'f', 3).arg(mb / (k0 / 1e3), 0, 'f', 1)
                        .arg(mb / (k1 / 1e3), 0, 'f', 1).arg(dd, 0, 'f', 1);
        else
            std::printf("%12lld %10.3f %10.1f %10.3f %10.1f %12.1f\n", static_cast<long long>(size), k0,
                        mb / (k0 / 1e3), k1, mb / (k1 / 1e3), dd);
        std::fflush(stdout);
    }
    // The store first lets go of the directory: its lock file is in there.
    const QString directory = store.directory();
    store.setDirectory(QString());
    QDir(directory).removeRecursively();
    if (parser.isSet(QStringLiteral("json")))
        std::printf("{\"op\":\"checkpoint\",\"results\":[%s]}\n", qPrintable(rows.join(u',')));
    return 0;
}

} // namespace mmpi::bench
