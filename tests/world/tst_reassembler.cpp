// Reassembler: fragments become the message again, in a buffer of its own or
// in the place its receiver offers; a receiver that comes while the message
// is on its way gets the rest there too, with what came before copied once.
#include "fragments.h"
#include "reassembler.h"
#include "recordinglink.h"

#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;

namespace {

constexpr qint64 Chunk = 1000;

// A message of `count` 32-bit items, cut as a sender cuts it.
struct Cut
{
    Frame message;
    QList<Frame> fragments;
};

Cut cut(quint32 count)
{
    Cut c;
    c.message = makeFrame(FrameKind::Data, ItemType::Int, count, mmpi::test::patterned(qsizetype(count) * 4, 9));
    c.fragments.append(fragmentAnnouncement(c.message));
    const qint64 bytes = c.message.payload.size();
    for (qint64 offset = 0; offset < bytes; offset += Chunk)
        c.fragments.append(fragmentOf(c.message, offset, qMin(Chunk, bytes - offset)));
    for (Frame &f : c.fragments) // as the decoder reads them
        f.header.payloadLength = quint32(f.payload.size());
    return c;
}

// Feeds every fragment; the message that comes out of the last one.
std::optional<Frame> feed(Reassembler &reassembler, const QList<Frame> &fragments,
                          const MessagePlacement &placement = {})
{
    std::optional<Frame> done;
    for (const Frame &fragment : fragments) {
        auto out = reassembler.add(fragment, placement);
        if (!out) {
            qWarning() << out.error().message;
            return std::nullopt;
        }
        if (out->has_value())
            done = std::move(**out);
    }
    return done;
}

} // namespace

class TestReassembler : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void withoutAPlaceTheMessageHasItsOwnBuffer()
    {
        const Cut c = cut(1000);
        Reassembler reassembler(1 << 20);
        const auto done = feed(reassembler, c.fragments);
        QVERIFY(done);
        QVERIFY(!(done->header.flags & PlacedPayload));
        QCOMPARE(done->payload, c.message.payload);
    }

    void aPlaceOfferedAtTheStartTakesEveryByte()
    {
        const Cut c = cut(1000);
        QByteArray place(c.message.payload.size(), '\0');
        int asked = 0;
        Reassembler reassembler(1 << 20);
        const auto done = feed(reassembler, c.fragments, [&](const FrameHeader &, qint64 bytes) {
            ++asked;
            return bytes == place.size() ? place.data() : nullptr;
        });
        QVERIFY(done);
        QVERIFY(done->header.flags & PlacedPayload);
        QVERIFY(done->payload.isEmpty());
        QCOMPARE(place, c.message.payload);
        QCOMPARE(asked, 1);
    }

    // A receive posted, or a collective started, after the first fragments
    // arrived: they are copied to its place, the rest is written there.
    void aPlaceOfferedLaterGetsWhatCameBeforeAndTheRest_data()
    {
        QTest::addColumn<int>("offeredAt");
        QTest::newRow("second slice") << 2;
        QTest::newRow("last slice") << 4;
    }
    void aPlaceOfferedLaterGetsWhatCameBeforeAndTheRest()
    {
        QFETCH(int, offeredAt);
        const Cut c = cut(1000); // 4000 bytes: an announcement and 4 slices
        QCOMPARE(c.fragments.size(), 5);
        QByteArray place(c.message.payload.size(), '\0');
        int asked = 0;
        Reassembler reassembler(1 << 20);
        const auto done = feed(reassembler, c.fragments, [&](const FrameHeader &header, qint64 bytes) {
            ++asked;
            if (asked <= offeredAt || header.count != 1000 || bytes != place.size())
                return static_cast<char *>(nullptr);
            return place.data();
        });
        QVERIFY(done);
        QVERIFY(done->header.flags & PlacedPayload);
        QCOMPARE(place, c.message.payload);
        // asked at the start and before each slice until it got a place
        QCOMPARE(asked, offeredAt + 1);
    }

    // Items whose size is not known before they are read (Object records)
    // are never placed: they must be checked whole.
    void messagesOfUnknownSizeAreNeverPlaced()
    {
        Cut c = cut(1000);
        for (Frame &f : c.fragments)
            f.header.itemType = ItemType::Object;
        int asked = 0;
        const MessagePlacement placement = [&](const FrameHeader &, qint64) -> char * {
            ++asked;
            return nullptr;
        };
        Reassembler reassembler(1 << 20);
        for (const Frame &fragment : c.fragments.mid(0, 3))
            QVERIFY(reassembler.add(fragment, placement));
        QCOMPARE(asked, 0);
    }
};

QTEST_GUILESS_MAIN(TestReassembler)
#include "tst_reassembler.moc"
