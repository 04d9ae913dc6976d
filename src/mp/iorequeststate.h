// The shared state behind an IoRequest: its outcome and who to tell. The
// group or channel keeps it while the request is pending; handles share it.
#pragma once

#include <mmpi/mp/iorequest.h>

#include <QList>
#include <QPointer>

namespace mmpi::mp::detail {

template<typename T>
class IoRequestState
{
public:
    virtual ~IoRequestState() = default;

    // Store the outcome and queue every callback and the awaiting coroutine.
    void finish(Result<T> outcome);
    bool isFinished() const { return outcome.has_value(); }

    std::optional<Result<T>> outcome;
    struct Callback
    {
        QPointer<QObject> context;
        std::function<void(const Result<T> &)> f;
    };
    QList<Callback> callbacks;
    std::coroutine_handle<> waiter;
    // Set by the owner while pending: takes the request off its list.
    std::function<void()> withdraw;
};

} // namespace mmpi::mp::detail
