#include "streamreader.h"

#include "parksweeper.h"
#include "socketerror.h"

#include <mmpi/wire/bufferpool.h>

#include <QScopedValueRollback>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace mmpi {

LinkReader::~LinkReader() = default;

void LinkReader::setPayloadPlacement(PayloadPlacement) {}

void LinkReader::setPayloadSpin(std::chrono::microseconds, std::function<bool()>) {}

namespace detail {

namespace {

// Small frames are decoded from here; one recv() often brings several.
constexpr qsizetype StagingSize = 64 * 1024;
// What a claimer reads per readiness, like the owner's budget per notification.
constexpr qint64 ClaimerBudget = 4 * 1024 * 1024;
// A payload buffer starts at most this big and doubles as bytes arrive: a
// header that announces a huge frame reserves memory only as it is sent.
constexpr qsizetype InitialPayloadLimit = 1024 * 1024;
// A payload this large costs more to copy out of m_staging than a recv() of
// its header alone does.
constexpr qsizetype LargePayload = 16 * 1024;

// One read loop's spin: it may read again without waiting for readiness
// until `spin` has passed since bytes last came.
class SpinWindow
{
public:
    SpinWindow(qint64 spinNs, quint64 received) : m_spinNs(spinNs), m_received(received) {}
    bool goOn(quint64 received)
    {
        const qint64 now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch()).count();
        if (received != m_received || m_lastNs == 0) {
            m_received = received;
            m_lastNs = now;
        }
        return now - m_lastNs < m_spinNs;
    }

private:
    const qint64 m_spinNs;
    quint64 m_received;
    qint64 m_lastNs = 0;
};

} // namespace

StreamReader::StreamReader(int descriptor, DecoderLimits limits)
    : m_fd(descriptor), m_epoll(::epoll_create1(EPOLL_CLOEXEC)), m_limits(limits),
      m_staging(StagingSize, Qt::Uninitialized)
{
    ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
    watch(true);
}

StreamReader::~StreamReader()
{
    if (m_fd >= 0)
        ::close(m_fd);
    if (m_epoll >= 0)
        ::close(m_epoll);
}

qint64 StreamReader::monotonicNanoseconds()
{
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return qint64(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// Level-triggered: while the socket is in the set, the set is readable
// whenever the socket is; adding it back reports input that came meanwhile.
void StreamReader::watch(bool enabled)
{
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = m_fd;
    ::epoll_ctl(m_epoll, enabled ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, m_fd, &event);
}

void StreamReader::prependReceived(const QByteArray &bytes)
{
    QMutexLocker lock(&m_mutex);
    if (m_end + bytes.size() > m_staging.size())
        m_staging.resize(m_end + bytes.size());
    std::memcpy(m_staging.data() + m_end, bytes.constData(), size_t(bytes.size()));
    m_bytesReceived += quint64(bytes.size());
    m_end += bytes.size();
}

bool StreamReader::hasStagedFrame() const
{
    QMutexLocker lock(&m_mutex);
    return stagedFrameLocked();
}

qint64 StreamReader::bufferedBytes() const
{
    QMutexLocker lock(&m_mutex);
    return (m_end - m_begin) + (m_header ? FrameHeaderSize + m_filled : 0);
}

void StreamReader::setPayloadPlacement(PayloadPlacement placement)
{
    QMutexLocker lock(&m_mutex);
    m_placement = std::move(placement);
}

void StreamReader::setPayloadSpin(std::chrono::microseconds spin, std::function<bool()> ownerIdle)
{
    QMutexLocker lock(&m_mutex);
    m_spinNs = std::chrono::duration_cast<std::chrono::nanoseconds>(spin).count();
    m_ownerIdle = std::move(ownerIdle);
}

void StreamReader::setOwnerCall(std::function<void()> call)
{
    QMutexLocker lock(&m_mutex);
    m_ownerCall = std::move(call);
}

void StreamReader::closeDescriptor()
{
    QMutexLocker lock(&m_mutex);
    m_stopped = true;
    m_ownerCall = {};
    if (m_fd < 0)
        return;
    if (m_claimed && !m_parked) {
        ::shutdown(m_fd, SHUT_RDWR); // wakes the claimer's poll()
        m_closeOnRelease = true;
        return;
    }
    ::close(m_fd);
    m_fd = -1;
}

StreamReader::Outcome StreamReader::readForOwner(qint64 budget, const OwnerDelivery &deliver)
{
    QMutexLocker lock(&m_mutex);
    if (m_trouble)
        return *std::exchange(m_trouble, std::nullopt);
    if (m_claimed)
        return {Status::Claimed, {}};
    if (m_fd < 0)
        return {Status::Held, {}};
    return readLoop(budget, deliver, true);
}

LinkReader::Claim StreamReader::claim(const void *claimer)
{
    QMutexLocker lock(&m_mutex);
    if ((m_claimed && !m_parked) || m_fd < 0 || holding() || m_trouble)
        return Claim::Refused;
    if (!m_claimed)
        watch(false);
    m_claimed = true;
    m_parked = false;
    m_claimer = claimer;
    return stagedFrameLocked() ? Claim::Buffered : Claim::Claimed;
}

void StreamReader::release(const void *claimer)
{
    QMutexLocker lock(&m_mutex);
    if (m_claimed && m_claimer == claimer)
        giveBack();
}

void StreamReader::park(const void *claimer)
{
    {
        QMutexLocker lock(&m_mutex);
        if (!m_claimed || m_parked || m_claimer != claimer)
            return;
        if (m_closeOnRelease || m_fd < 0 || m_stopped)
            return giveBack();
        m_parked = true;
        m_parkedAtNs = monotonicNanoseconds();
        if (std::exchange(m_swept, true))
            return;
    }
    ParkSweeper::instance().watch(weak_from_this());
}

// The sweeper keeps a reader while it is parked or was parked a moment ago
// (a thread between two waits claims and parks it again and again); one
// claimed for longer, or given back, it lets go.
bool StreamReader::expireParked(qint64 nowNs, qint64 parkNs)
{
    QMutexLocker lock(&m_mutex);
    const bool stale = nowNs - m_parkedAtNs >= parkNs;
    if (m_claimed && m_parked && stale)
        giveBack(); // its claimer did not come back
    m_swept = m_claimed && (m_parked || !stale);
    return m_swept;
}

void StreamReader::giveBack()
{
    m_claimed = m_parked = false;
    m_claimer = nullptr;
    if (m_closeOnRelease) {
        ::close(m_fd);
        m_fd = -1;
        return;
    }
    if (m_fd >= 0)
        watch(true);
    // What the claimer read but did not handle is no news to the socket.
    if (stagedFrameLocked() && m_ownerCall)
        m_ownerCall();
}

bool StreamReader::readAvailable(const std::function<bool(Frame &&)> &deliver, const PayloadPlacement &place)
{
    QMutexLocker lock(&m_mutex);
    if (!m_claimed || m_parked || m_fd < 0 || holding() || m_trouble)
        return false;
    const QScopedValueRollback claimerPlacement(m_claimerPlacement, place ? &place : nullptr);
    // One pointer captured, so the std::function needs no allocation.
    struct Delivery
    {
        StreamReader *reader;
        const std::function<bool(Frame &&)> *deliver;
        bool more = true;
    } delivery{this, &deliver};
    const Outcome outcome = readLoop(ClaimerBudget, [d = &delivery](Frame &&frame) {
        d->more = (*d->deliver)(std::move(frame));
        return d->more && !d->reader->holding();
    }, false);
    const bool more = delivery.more;
    if (outcome.status == Status::Ended || outcome.status == Status::Failed) {
        // Reported by the owner, on its thread, as if it had read it.
        m_trouble = outcome;
        if (m_ownerCall)
            m_ownerCall();
        return false;
    }
    return more && !holding();
}

StreamReader::Outcome StreamReader::readLoop(qint64 budget, const OwnerDelivery &deliver, bool owner)
{
    m_result = {Status::Drained, {}};
    SpinWindow spin(m_spinNs, m_bytesReceived.load());
    while (!holding() && budget > 0) {
        if (readOnce(budget, deliver))
            continue;
        if (m_result.status != Status::Drained || !maySpin(owner))
            break;
        if (!spin.goOn(m_bytesReceived.load())) {
            m_spinGaveUp = true;
            break;
        }
    }
    if (m_result.status == Status::Drained && holding())
        m_result.status = Status::Held;
    return m_result;
}

// A short read means the socket is drained for now: stopping there saves the
// recv() that would only say EAGAIN (readiness is reported again for more).
bool StreamReader::readOnce(qint64 &budget, const OwnerDelivery &deliver)
{
    return m_header ? readIntoPayload(budget, deliver) : readIntoStaging(budget, deliver);
}

qsizetype StreamReader::receive(char *into, qsizetype wanted, qint64 &budget)
{
    const ssize_t n = ::recv(m_fd, into, size_t(wanted), 0);
    if (n > 0) {
        budget -= n;
        m_bytesReceived += quint64(n);
        return qsizetype(n);
    }
    if (n < 0 && errno == EINTR)
        return 0;
    if (n < 0 && wouldBlock(errno))
        return -1;
    if (n == 0 || peerGone(errno))
        m_result = {Status::Ended, {}};
    else
        m_result = {Status::Failed, ioError("recv", errno)};
    return -1;
}

bool StreamReader::readIntoPayload(qint64 &budget, const OwnerDelivery &deliver)
{
    const qsizetype length = qsizetype(m_header->payloadLength);
    if (!m_target && m_filled == m_payload.size())
        m_payload.resize(qMin(length, qMax(2 * m_payload.size(), InitialPayloadLimit)));
    const qsizetype wanted = (m_target ? length : m_payload.size()) - m_filled;
    char *into = (m_target ? m_target : m_payload.data()) + m_filled;
    const qsizetype n = receive(into, wanted, budget);
    if (n <= 0)
        return n == 0;
    m_filled += n;
    if (m_filled < length)
        return n == wanted;
    const FrameHeader header = *std::exchange(m_header, std::nullopt);
    m_filled = 0;
    if (std::exchange(m_target, nullptr))
        return deliverPlaced(header, deliver) && n == wanted;
    return deliverFrame(header, std::exchange(m_payload, {}), deliver) && n == wanted;
}

bool StreamReader::readIntoStaging(qint64 &budget, const OwnerDelivery &deliver)
{
    if (m_end - m_begin >= FrameHeaderSize) // frames held back by a pause
        return decodeStaged(deliver);
    if (m_begin > 0) { // less than a header is left: move it to the front
        std::memmove(m_staging.data(), m_staging.constData() + m_begin, size_t(m_end - m_begin));
        m_end -= m_begin;
        m_begin = 0;
    }
    const qsizetype wanted = m_expectLarge && m_end == 0 ? FrameHeaderSize : m_staging.size() - m_end;
    const qsizetype n = receive(m_staging.data() + m_end, wanted, budget);
    if (n <= 0)
        return n == 0;
    m_end += n;
    return decodeStaged(deliver) && n == wanted;
}

bool StreamReader::decodeStaged(const OwnerDelivery &deliver)
{
    while (!holding()) {
        const char *head = m_staging.constData() + m_begin;
        const qsizetype available = m_end - m_begin;
        if (available < FrameHeaderSize) {
            if (auto ok = FrameDecoder::checkHeaderPrefix(QByteArrayView(head, available)); !ok) {
                m_result = {Status::Failed, ok.error()};
                return false;
            }
            return true;
        }
        auto header = FrameDecoder::decodeHeader(QByteArrayView(head, FrameHeaderSize), m_limits);
        if (!header) {
            m_result = {Status::Failed, header.error()};
            return false;
        }
        const qsizetype length = qsizetype(header->payloadLength);
        // A large payload, or the first fragment of a message (which
        // announces its length only): large ones follow.
        m_expectLarge = length >= LargePayload
                        || (header->kind == FrameKind::Fragment
                            && (header->flags & (FirstFragment | LastFragment)) == FirstFragment);
        if (available - FrameHeaderSize < length) {
            beginPayload(*header, head + FrameHeaderSize, available - FrameHeaderSize);
            return true;
        }
        m_begin += FrameHeaderSize + length;
        if (char *place = placeFor(*header)) {
            std::memcpy(place, head + FrameHeaderSize, size_t(length));
            if (!deliverPlaced(*header, deliver))
                return false;
            continue;
        }
        if (!deliverFrame(*header, QByteArray(head + FrameHeaderSize, length), deliver))
            return false;
    }
    return false;
}

void StreamReader::beginPayload(const FrameHeader &header, const char *bytes, qsizetype available)
{
    const qsizetype length = qsizetype(header.payloadLength);
    m_header = header;
    // Read into its place in pieces: a fragment's message lives on in the
    // reassembler if the link breaks and is resumed, and a Data frame sent
    // again whole is offered the same place (MessageSink::placeFor).
    m_target = placeFor(header);
    if (m_target) {
        std::memcpy(m_target, bytes, size_t(available));
        m_filled = available;
        m_begin = m_end = 0;
        return;
    }
    m_payload = BufferPool::take(qMin(length, qMax(available, InitialPayloadLimit)));
    std::memcpy(m_payload.data(), bytes, size_t(available));
    m_filled = available;
    m_begin = m_end = 0;
}

// The thread that claimed the link asks its own placement, for fragments too
// (the message in progress may go on there).
char *StreamReader::placeFor(const FrameHeader &header) const
{
    const bool fragment = header.kind == FrameKind::Fragment;
    if (!fragment && (header.kind != FrameKind::Data || header.payloadLength < MinPlacedPayload))
        return nullptr;
    const PayloadPlacement *place = m_claimed ? m_claimerPlacement : &m_placement;
    return place && *place ? (*place)(header) : nullptr;
}

// Its length is right by construction; what the bytes may hold is checked
// with the whole message they belong to (a fragment's), or was when the
// place was given (a Data frame's: a receive's buffer for exactly its items).
bool StreamReader::deliverPlaced(const FrameHeader &header, const OwnerDelivery &deliver)
{
    noteDelivered(header);
    Frame frame{header, QByteArray()};
    if (header.kind == FrameKind::Data)
        frame.header.flags |= PlacedPayload;
    if (deliver(std::move(frame)))
        return true;
    m_result.status = Status::Held;
    return false;
}

bool StreamReader::deliverFrame(const FrameHeader &header, QByteArray payload, const OwnerDelivery &deliver)
{
    if (auto ok = FrameDecoder::checkPayload(header, payload); !ok) {
        m_result = {Status::Failed, ok.error()};
        return false;
    }
    noteDelivered(header);
    if (deliver(Frame{header, std::move(payload)}))
        return true;
    m_result.status = Status::Held;
    return false;
}

bool StreamReader::maySpin(bool owner) const
{
    return m_spinNs > 0 && !holding() && moreDue() && (!owner || !m_ownerIdle || m_ownerIdle());
}

void StreamReader::noteDelivered(const FrameHeader &header)
{
    ++m_framesReceived;
    m_fragmentsDue = header.kind == FrameKind::Fragment && !(header.flags & LastFragment);
    m_spinGaveUp = false;
}

} // namespace detail

} // namespace mmpi
