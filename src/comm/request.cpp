#include <mmpi/comm/request.h>

#include "requeststate.h"

#include <mmpi/core/logging.h>

#include <QCoreApplication>
#include <QPointer>
#include <QThread>
#include <QWaitCondition>

namespace mmpi {

namespace detail {

namespace {

// One object per thread that awaits or watches: completions are posted to it
// so that they run on that thread's event loop.
QObject *threadContext()
{
    thread_local std::unique_ptr<QObject> context = std::make_unique<QObject>();
    return context.get();
}

void warnIfGuiThread()
{
    const QCoreApplication *app = QCoreApplication::instance();
    if (!app || QThread::currentThread() != app->thread() || !app->inherits("QGuiApplication"))
        return;
    static std::once_flag warned;
    std::call_once(warned, [] {
        qCWarning(lcComm) << "Request::wait() blocks the GUI thread until a message arrives; "
                             "use co_await or RequestWatcher there";
    });
}

} // namespace

std::function<void()> onThisThread(std::function<void()> f)
{
    QPointer<QObject> context = threadContext();
    return [context, f = std::move(f)] {
        if (context)
            QMetaObject::invokeMethod(context, f, Qt::QueuedConnection);
    };
}

} // namespace detail

Request::Request(std::shared_ptr<detail::RequestState> state)
    : m_state(std::move(state))
{
}

Request::Pending Request::pending()
{
    auto state = std::make_shared<detail::RequestState>(detail::RequestState::Kind::Send, 0, AnySource, AnyTag);
    return {Request(state), [state](const Error &error) {
                state->complete(error.isError() ? Result<Status>(error) : Result<Status>(Status{}));
            }};
}

bool Request::isFinished() const
{
    return !m_state || m_state->isFinished();
}

std::optional<Result<Status>> Request::test() const
{
    if (!m_state)
        return Result<Status>(Status{});
    return m_state->outcome();
}

Result<Status> Request::wait() const
{
    if (!m_state)
        return Status{};
    if (!m_state->isFinished())
        detail::warnIfGuiThread();
    return m_state->wait();
}

bool Request::cancel() const
{
    return m_state && m_state->cancel();
}

const Payload &Request::payload() const
{
    static const Payload empty;
    return m_state ? m_state->payload() : empty;
}

void Request::offerPlace(void *data, qint64 items, int itemBytes, bool (*accepts)(ItemType),
                         Result<void> (*decode)(const Payload &, char *, qint64)) const
{
    if (m_state && m_state->kind == detail::RequestState::Kind::Receive && data && items > 0)
        m_state->offerPlace({static_cast<char *>(data), items, itemBytes, accepts, decode});
}

const char *Request::deliveredData() const
{
    return m_state ? m_state->deliveredData() : nullptr;
}

bool Request::wasPlaced() const
{
    return m_state && m_state->wasPlaced();
}

Result<void> Request::checkPlacedCopy(const Payload &p, bool decodes, ItemType wanted, qint64 capacity)
{
    if (!decodes)
        return detail::typeMismatch(p.itemType, itemTypeName(wanted));
    if (capacity < qint64(p.count))
        return Error{ErrorCode::TruncatedPayload, QStringLiteral("a message of %1 %2 items does not fit a buffer of %3")
                                                      .arg(p.count).arg(itemTypeName(p.itemType)).arg(capacity)};
    return success();
}

Error Request::placedElsewhere()
{
    return {ErrorCode::TypeMismatch,
            QStringLiteral("the message went straight into the buffer given to valueInto(); read it from there")};
}

void Request::onFinished(QObject *context, std::function<void()> f) const
{
    QPointer<QObject> guard(context);
    auto post = [guard, f = std::move(f)] {
        if (guard)
            QMetaObject::invokeMethod(guard, f, Qt::QueuedConnection);
    };
    if (!m_state)
        return post();
    m_state->whenFinished(std::move(post));
}

bool Request::Awaiter::await_ready() const noexcept
{
    return !state || state->isFinished();
}

// Resumes on the awaiting thread, never on the progress thread that completed
// the request (QCoro 0.8 would resume signal awaiters on the sender's thread).
void Request::Awaiter::await_suspend(std::coroutine_handle<> handle) const
{
    state->whenFinished(detail::onThisThread([handle] { handle.resume(); }));
}

Result<Status> Request::Awaiter::await_resume() const
{
    return state ? state->wait() : Result<Status>(Status{});
}

Result<void> Request::waitAll(const QList<Request> &requests)
{
    Error first;
    for (const Request &r : requests)
        if (auto outcome = r.wait(); !outcome && !first.isError())
            first = outcome.error();
    if (first.isError())
        return first;
    return success();
}

int Request::waitAny(const QList<Request> &requests)
{
    if (requests.isEmpty())
        return -1;
    // On the heap: a request that finishes after we returned still pokes it.
    struct Waker
    {
        QMutex mutex;
        QWaitCondition wake;
    };
    auto waker = std::make_shared<Waker>();
    for (const Request &r : requests)
        if (r.m_state)
            r.m_state->whenFinished([waker] {
                QMutexLocker lock(&waker->mutex);
                waker->wake.wakeAll();
            });
    QMutexLocker lock(&waker->mutex);
    for (;;) {
        for (int i = 0; i < requests.size(); ++i)
            if (requests.at(i).isFinished())
                return i;
        detail::warnIfGuiThread();
        waker->wake.wait(&waker->mutex);
    }
}

bool Request::testAll(const QList<Request> &requests)
{
    return std::all_of(requests.begin(), requests.end(), [](const Request &r) { return r.isFinished(); });
}

RequestWatcher::RequestWatcher(QObject *parent)
    : QObject(parent)
{
}

void RequestWatcher::setRequest(const Request &request)
{
    m_request = request;
    const quint64 generation = ++m_generation;
    request.onFinished(this, [this, generation] {
        if (generation == m_generation)
            Q_EMIT finished();
    });
}

} // namespace mmpi
