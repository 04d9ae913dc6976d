// ArrivalTiming: how fast a peer's bytes arrive while one of its frames is
// in flight, from the reads of a stream link. A frame leaves its sender's
// kernel as fast as the radio takes it, so the reads after its first show
// the radio's rate at the far end, even for a frame of a few packets that
// the sender's own drain timing (DepartureWatch) sees leave at once.
#pragma once

#include <QtGlobal>

#include <optional>

namespace mmpi {

class ArrivalTiming
{
public:
    // The reads of one wake-up brought `bytes` at `nowUs`; `midFrame` when a
    // frame is still incomplete after them. Returns a rate (bytes per
    // second) when a frame or a run of frames that kept arriving ends and
    // was long enough to time.
    std::optional<double> noteRead(qint64 bytes, bool midFrame, qint64 nowUs);
    // Reading paused (flow control): the silence that follows is this end's,
    // not the link's, so the run under way is not timed.
    void interrupt() { m_startUs = -1; }

    // A run is timed from its first wake-up, whose bytes came in an unknown
    // time before, so only the bytes after it count: more than a packet
    // (Ethernet's and Wi-Fi's 1500-byte MTU less TCP/IP's 52 bytes: 1448),
    // so that a 4 KiB message, three packets, is timed over two...
    static constexpr qint64 MinSampleBytes = 2048;
    // ...over at least this long: below it, the event loop's wake-ups, not
    // the link, set the time (a Wi-Fi link moves 5 MB/s, 10 kB per 2 ms).
    static constexpr qint64 MinSpanUs = 2000;

private:
    qint64 m_startUs = -1; // the run's first wake-up, -1 when no frame is in flight
    qint64 m_bytes = 0;    // arrived after it
};

} // namespace mmpi
