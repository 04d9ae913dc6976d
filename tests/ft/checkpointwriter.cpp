// checkpointwriter DIR FIRST: takes DIR's lock, then writes checkpoints of
// epochs FIRST, FIRST+1, ... (checkpointPattern(epoch)) into DIR until it is
// killed; tst_checkpointstore kills it with SIGKILL at random moments, and
// checks that another store cannot use DIR meanwhile. Exit 3: DIR is locked
// by another store (the reason on stderr).
#include "checkpointpattern.h"

#include <mmpi/ft/checkpointstore.h>

#include <QCoreApplication>

#include <cstdio>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    if (argc != 3) {
        std::fprintf(stderr, "usage: checkpointwriter DIR FIRST\n");
        return 2;
    }
    mmpi::CheckpointStore store;
    store.setDirectory(QString::fromLocal8Bit(argv[1]));
    store.setKeep(3);
    quint64 epoch = QByteArray(argv[2]).toULongLong();
    store.setState([&epoch] { return checkpointPattern(epoch); }, [](const QByteArray &) { return mmpi::success(); });
    // The lock before "ready": the kills then never land while it is being
    // taken (a lock file cut short names no holder and is never stale).
    if (auto locked = store.lockDirectory(); !locked) {
        std::fprintf(stderr, "checkpointwriter: %s\n", qPrintable(locked.error().message));
        return 3;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    for (;; ++epoch) {
        if (auto ok = store.checkpoint(epoch); !ok) {
            std::fprintf(stderr, "checkpointwriter: %s\n", qPrintable(ok.error().message));
            return 1;
        }
    }
}
