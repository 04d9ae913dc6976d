// SimTransport: links between processes on one machine that behave like a chosen
// radio: the local transport (loaded through the registry) underneath, one SimRadio
// shaping what the node sends, and scripted faults for its own rank. Addresses:
// "sim://<server name>"; options and behaviour: docs/transports.md, "sim".
#pragma once

#include "simfault.h"
#include "simprofile.h"
#include "simradio.h"

#include <mmpi/transport/transport.h>

#include <QElapsedTimer>
#include <QList>
#include <QPointer>

namespace mmpi {

class SimLink;

class SimTransport : public Transport
{
    Q_OBJECT
    // For tests and diagnostics: what configure() made of the options.
    Q_PROPERTY(QString link READ linkName)
    Q_PROPERTY(qint64 latencyMs READ latencyMs)
    Q_PROPERTY(qint64 bandwidth READ bandwidth)
    Q_PROPERTY(qint64 queueLimit READ queueLimit)
    Q_PROPERTY(int rank READ rank)
    Q_PROPERTY(QStringList faults READ faultTexts)
public:
    // `local` is the transport that carries the bytes; the sim transport owns it.
    explicit SimTransport(Transport *local, QObject *parent = nullptr);
    ~SimTransport() override;

    QString name() const override { return QStringLiteral("sim"); }
    Result<void> configure(const QVariantMap &options) override;
    // The configured profile with its latency and bandwidth options.
    LinkMedium expectedLink() const override;

    Result<QString> listen(const QString &address) override;
    QString listenAddress() const override;
    void stopListening() override;
    Result<Link *> connectTo(const QString &address) override;

    bool supportsDiscovery() const override { return true; }
    Result<void> advertise(const PeerAdvert &advert) override;
    void stopAdvertising() override;
    Result<void> startDiscovery(const QString &worldName) override;
    void stopDiscovery() override;

    QString linkName() const { return m_profile.name; }
    qint64 latencyMs() const { return m_profile.latencyMs; }
    qint64 bandwidth() const { return m_profile.bandwidth; }
    qint64 queueLimit() const { return m_radio.queueLimit(); }
    int rank() const { return m_rank; }
    QStringList faultTexts() const;

    // $XDG_RUNTIME_DIR/mmpi-sim-discovery, or <temp dir>/mmpi-sim-discovery.
    static QString defaultDiscoveryDirectory();

private:
    SimLink *adopt(Link *inner, const QString &peerAddress);
    void handleIncomingLink(Link *inner);
    void startFaults();
    void handleFault(const SimFault &fault);
    void breakLinks(const QString &reason);
    void enterOutOfRange(const SimFault &fault);
    void leaveOutOfRange();
    [[noreturn]] void terminateProcess(const SimFault &fault);

    QPointer<Transport> m_local;
    SimRadio m_radio;
    SimProfile m_profile;
    int m_rank = -1;
    QList<SimFault> m_faults; // those for this node's rank
    QList<QTimer *> m_faultTimers;
    QList<QPointer<SimLink>> m_links;
    // Server name we listen under (also while out of range); empty if not listening.
    QString m_serverName;
    // Out-of-range windows that have begun and not ended (they may overlap).
    int m_outOfRange = 0;
    QString m_outOfRangeReason;
};

} // namespace mmpi
