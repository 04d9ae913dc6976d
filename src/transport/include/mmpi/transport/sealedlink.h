// SealedLink: a Link whose frames travel sealed (docs/design/protocol.md,
// "Sealed records") over another link, on any transport. The world makes one
// when a handshake has agreed the link's keys; from then on every frame in
// either direction is a record of the inner link. A record that fails to open
// ends the link with RecordRefused and the reason (logged to mmpi.transport),
// as any broken link ends: the world reconnects and resumes with new keys.
// Lives in the progress thread like the link it wraps, which it owns.
#pragma once

#include <mmpi/transport/link.h>
#include <mmpi/wire/recordcipher.h>

#include <QPointer>

namespace mmpi {

class SealedLink : public Link
{
    Q_OBJECT
public:
    // `sender` seals what this end sends, `receiver` opens what the peer sent.
    // Takes ownership of `inner` (reparents it), which must be Connected.
    SealedLink(Link *inner, RecordCipher sender, RecordCipher receiver, QObject *parent = nullptr);
    ~SealedLink() override;

    QString peerAddress() const override;
    void sendFrame(const Frame &frame) override;
    void setReading(bool enabled) override;
    qint64 bytesToWrite() const override;
    qint64 unsentBytes() const override;
    LinkCounters counters() const override;
    void close() override;

    // What both ends of this link show a person to compare (the handshake's
    // verification code), empty if none was set.
    QString verificationCode() const { return m_verificationCode; }
    void setVerificationCode(const QString &code) { m_verificationCode = code; }

private:
    void handleRecord(const Frame &record);
    void handleInnerState(Link::State state);
    void failWith(const Error &error);

    QPointer<Link> m_inner;
    RecordCipher m_sender;
    RecordCipher m_receiver;
    QString m_peerAddress; // kept: the inner link may be gone when it is asked for
    QString m_verificationCode;
};

} // namespace mmpi
