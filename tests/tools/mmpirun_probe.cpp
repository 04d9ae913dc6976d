// mmpirun_probe: a stand-in node for tst_mmpirun. It prints the MMPI_* launch
// environment it got as one line, then does what its arguments say (bursts of
// output, a partial line, an exit code or a crash on one rank, sleeping) so the
// test can check how mmpirun forwards output and reacts to failures.
//
//   --lines K                 K lines to stdout and K to stderr, each written in two pieces
//   --exit-code-for-rank R C  rank R exits with C right after its output
//   --crash-rank R            rank R calls abort() right after its output
//   --fail-after-ms M         the exiting or crashing rank waits M ms first (so the
//                             others have started and reported)
//   --sleep-ms M              the other ranks sleep M ms, then print "done"
//   --ignore-term             ignore SIGTERM (to exercise mmpirun's SIGKILL)
//   --partial-line            end with "partial-<rank>" and no newline
//   --leave-socket            first listen on a Unix socket $TMPDIR/mmpi-<pid>-probe and
//                             never remove it (as a killed node's transport leaves its own)
#include <QByteArray>
#include <QCryptographicHash>
#include <QThread>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

struct ProbeOptions
{
    int lines = 0;
    int exitRank = -1;
    int exitCode = 0;
    int crashRank = -1;
    int sleepMs = 0;
    int failAfterMs = 0;
    bool ignoreTerm = false;
    bool partialLine = false;
    bool leaveSocket = false;
};

ProbeOptions parse(int argc, char **argv)
{
    ProbeOptions o;
    for (int i = 1; i < argc; ++i) {
        const auto is = [&](const char *name, int values) { return !std::strcmp(argv[i], name) && i + values < argc; };
        if (is("--lines", 1))
            o.lines = std::atoi(argv[++i]);
        else if (is("--exit-code-for-rank", 2)) {
            o.exitRank = std::atoi(argv[++i]);
            o.exitCode = std::atoi(argv[++i]);
        } else if (is("--crash-rank", 1))
            o.crashRank = std::atoi(argv[++i]);
        else if (is("--fail-after-ms", 1))
            o.failAfterMs = std::atoi(argv[++i]);
        else if (is("--sleep-ms", 1))
            o.sleepMs = std::atoi(argv[++i]);
        else if (is("--ignore-term", 0))
            o.ignoreTerm = true;
        else if (is("--partial-line", 0))
            o.partialLine = true;
        else if (is("--leave-socket", 0))
            o.leaveSocket = true;
    }
    return o;
}

QByteArray env(const char *name)
{
    return qgetenv(name);
}

void printEnvironment()
{
    const QByteArray key = env("MMPI_WORLD_KEY");
    const QByteArray keyHash = QCryptographicHash::hash(key, QCryptographicHash::Sha256).toHex().left(16);
    std::printf("rank=%s size=%s transport=%s root=%s keylen=%d keyhash=%s keyhex=%d timeout=%s "
                "launcher=%s pid=%lld world=%s\n",
                env("MMPI_RANK").constData(), env("MMPI_SIZE").constData(), env("MMPI_TRANSPORT").constData(),
                env("MMPI_ROOT_ADDRESS").constData(), int(key.size()), keyHash.constData(),
                int(QByteArray::fromHex(key).toHex() == key), env("MMPI_FORMATION_TIMEOUT_MS").constData(),
                env("MMPI_LAUNCHER").constData(), qint64(::getpid()), env("MMPI_WORLD_NAME").constData());
    std::fflush(stdout);
}

// Each line in two writes, so that mmpirun sees partial lines and must join them.
void writeLines(std::FILE *stream, const char *name, int rank, int count)
{
    const QByteArray payload(120, char('a' + rank % 26));
    for (int i = 0; i < count; ++i) {
        std::fprintf(stream, "rank=%d stream=%s line=%d ", rank, name, i);
        std::fflush(stream);
        std::fprintf(stream, "%s\n", payload.constData());
        std::fflush(stream);
    }
}

// The descriptor stays open until the process ends; the file stays after it.
void leaveSocket()
{
    const QByteArray dir = qEnvironmentVariableIsSet("TMPDIR") ? qgetenv("TMPDIR") : QByteArray("/tmp");
    const QByteArray path = dir + "/mmpi-" + QByteArray::number(qint64(::getpid())) + "-probe";
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || size_t(path.size()) >= sizeof address.sun_path) {
        std::fprintf(stderr, "cannot make a socket at %s\n", path.constData());
        return;
    }
    std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0 || ::listen(fd, 1) != 0)
        std::fprintf(stderr, "cannot listen on %s: %s\n", path.constData(), std::strerror(errno));
}

[[noreturn]] void crash()
{
    // No core file in the build tree.
    const struct rlimit none = {0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    std::abort();
}

} // namespace

int main(int argc, char **argv)
{
    const ProbeOptions o = parse(argc, argv);
    const int rank = env("MMPI_RANK").toInt();
    if (o.ignoreTerm)
        std::signal(SIGTERM, SIG_IGN);
    if (o.leaveSocket)
        leaveSocket();
    printEnvironment();
    writeLines(stdout, "out", rank, o.lines);
    writeLines(stderr, "err", rank, o.lines);
    const bool failing = rank == o.crashRank || rank == o.exitRank;
    if (failing && o.failAfterMs > 0)
        QThread::msleep(ulong(o.failAfterMs));
    if (rank == o.crashRank)
        crash();
    if (rank == o.exitRank)
        return o.exitCode;
    if (o.sleepMs > 0) {
        QThread::msleep(ulong(o.sleepMs));
        std::printf("rank=%d done\n", rank);
    }
    if (o.partialLine)
        std::printf("partial-%d", rank);
    std::fflush(stdout);
    return 0;
}
