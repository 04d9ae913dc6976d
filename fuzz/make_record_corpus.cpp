// Writes the seed corpus of fuzz_recordcipher: streams of genuine records
// sealed with the fuzzer's key (fuzz/recordkey.h), so that mutations start
// from records that open: several in a row, an empty and a large frame, a
// record followed by a plain frame.
#include "recordkey.h"
#include "seedfiles.h"

#include <mmpi/wire/recordcipher.h>

using namespace mmpi;

namespace {

QByteArray sealAll(const QList<Frame> &frames)
{
    auto cipher = RecordCipher::create(fuzz::recordKey(), RecordCipher::Direction::ConnectorToAcceptor);
    QByteArray stream;
    for (const Frame &frame : frames) {
        auto record = cipher ? cipher->seal(frame) : Result<Frame>(cipher.error());
        if (!record)
            return {};
        stream += encodeFrame(*record);
    }
    return stream;
}

Frame data(QByteArray payload)
{
    Frame frame = makeFrame(FrameKind::Data, ItemType::Byte, quint32(payload.size()), payload);
    frame.header.source = 1;
    frame.header.destination = 0;
    frame.header.sequence = 1;
    return frame;
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    const Frame heartbeat = makeFrame(FrameKind::Heartbeat, ItemType::None, 0, {});
    const QByteArray three = sealAll({data("one"), heartbeat, data("three")});
    const QByteArray large = sealAll({data(QByteArray(70000, 'L'))});
    const QByteArray plainAfter = sealAll({data("sealed")}) + encodeFrame(data("plain"));
    const bool ok = !three.isEmpty() && !large.isEmpty()
        && fuzz::writeSeedFile(dir, QStringLiteral("three-records.bin"), {three})
        && fuzz::writeSeedFile(dir, QStringLiteral("large-record.bin"), {large})
        && fuzz::writeSeedFile(dir, QStringLiteral("plain-after-record.bin"), {plainAfter});
    return fuzz::corpusStatus(ok, dir);
}
