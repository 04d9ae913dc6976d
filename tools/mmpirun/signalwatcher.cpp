#include "signalwatcher.h"

#include <atomic>
#include <csignal>

namespace mmpi::tools {

namespace {

// A handler may only touch a lock-free atomic; the timer does the rest.
std::atomic<int> pendingSignal{0};
static_assert(std::atomic<int>::is_always_lock_free);

constexpr int watchedSignals[] = {SIGINT, SIGTERM};

void onSignal(int signal)
{
    pendingSignal.store(signal);
}

void setHandler(int signal, void (*handler)(int))
{
    struct sigaction action = {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    // Restart interrupted system calls so Qt's event loop is not disturbed.
    action.sa_flags = SA_RESTART;
    sigaction(signal, &action, nullptr);
}

} // namespace

SignalWatcher::SignalWatcher(QObject *parent) : QObject(parent)
{
    pendingSignal.store(0);
    for (int signal : watchedSignals)
        setHandler(signal, onSignal);
    connect(&m_timer, &QTimer::timeout, this, &SignalWatcher::poll);
    m_timer.start(50);
}

SignalWatcher::~SignalWatcher()
{
    for (int signal : watchedSignals)
        setHandler(signal, SIG_DFL);
}

void SignalWatcher::poll()
{
    if (const int signal = pendingSignal.exchange(0))
        Q_EMIT received(signal);
}

QString signalName(int signal)
{
    static const struct { int number; const char *name; } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
        {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    };
    for (const auto &entry : names) {
        if (entry.number == signal)
            return QString::fromLatin1(entry.name);
    }
    return QStringLiteral("signal %1").arg(signal);
}

} // namespace mmpi::tools
