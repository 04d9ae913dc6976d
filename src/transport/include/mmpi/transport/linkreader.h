// mmpi::LinkReader: lets a thread other than the link's read the link's frames
// itself for a while: a thread blocked on a message reads it straight from the
// socket instead of sleeping until the progress thread hands it over (one
// thread wake-up per message instead of two). Thread-safe; shared, so that
// the descriptor a claimer polls stays open until it lets go.
#pragma once

#include <mmpi/wire/frame.h>

#include <functional>

namespace mmpi {

class LinkReader
{
public:
    enum class Claim {
        Refused,  // closed, paused, or another thread reads it
        Claimed,  // poll descriptor() for input, then readAvailable()
        Buffered, // claimed, and whole frames already wait: readAvailable() now
    };

    virtual ~LinkReader();

    // Take reading over from the link's thread, which stops watching the
    // link until release(). Every successful claim needs a release().
    virtual Claim claim() = 0;
    virtual void release() = 0;
    // The socket to poll for input while claimed.
    virtual int descriptor() const = 0;
    // Read what has arrived, without blocking, and hand each whole frame to
    // `deliver` in order. False when the claimer should stop polling and
    // release: the link was paused or stopped, or reached its end or an
    // error, which the link reports on its own thread as usual.
    virtual bool readAvailable(const std::function<void(Frame &&)> &deliver) = 0;
};

} // namespace mmpi
