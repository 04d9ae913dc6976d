// RecordingLink: a connected link for tests of what the world writes to a
// link. It takes every frame at once and keeps it, with where its payload was
// written from and the payload's bytes at that moment; and test payloads.
#pragma once

#include <mmpi/transport/link.h>

#include <QList>

namespace mmpi::test {

class RecordingLink : public Link
{
public:
    RecordingLink() { setState(State::Connected); }
    QString peerAddress() const override { return QStringLiteral("test://peer"); }
    void sendFrame(const Frame &frame) override { record(frame); }
    qint64 bytesToWrite() const override { return 0; }
    void close() override { setState(State::Closed); }

    QList<Frame> frames;
    QList<const char *> writtenFrom;
    QList<QByteArray> written; // deep copies

private:
    void record(const Frame &frame)
    {
        frames.append(frame);
        writtenFrom.append(frame.payload.constData());
        written.append(QByteArray(frame.payload.constData(), frame.payload.size()));
    }
};

// Test payloads: byte i is i * 7 + seed, so payloads of other seeds differ.
inline QByteArray patterned(qsizetype bytes, int seed)
{
    QByteArray payload(bytes, Qt::Uninitialized);
    for (qsizetype i = 0; i < bytes; ++i)
        payload[i] = char(i * 7 + seed);
    return payload;
}

} // namespace mmpi::test
