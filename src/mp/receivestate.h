// The shared state behind a Receive: what it waits for, its outcome, and who
// to tell. The group keeps it while the receive is pending; handles share it.
#pragma once

#include <mmpi/mp/receive.h>
#include <mmpi/mp/receivespec.h>

#include <QList>
#include <QPointer>

namespace mmpi::mp::detail {

class ReceiveState
{
public:
    explicit ReceiveState(ReceiveSpec spec) : spec(spec) {}

    // Store the outcome and queue every callback and the awaiting coroutine.
    void finish(Result<Received> outcome);
    bool isFinished() const { return outcome.has_value(); }

    ReceiveSpec spec;
    std::optional<Result<Received>> outcome;
    struct Callback
    {
        QPointer<QObject> context;
        std::function<void(const Result<Received> &)> f;
    };
    QList<Callback> callbacks;
    std::coroutine_handle<> waiter;
    // Set by the group while pending: takes the receive off its list.
    std::function<void()> withdraw;
};

} // namespace mmpi::mp::detail
