// mmpi-mp-echo: an edu.rit.mp peer for checking interoperability with Parallel
// Java. It listens or connects with a given channel group ID, sends back every
// message with its tag and type (as PJ itself would send them; object messages
// verbatim), stops reading a peer that leaves its echoes unread, and prints
// one line per event (docs/guide/mp.md).
#include <mmpi/core/logging.h>
#include <mmpi/mp/channelgroup.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QPointer>
#include <QSet>
#include <QTextStream>

#include <cstdio>

using namespace mmpi;
using namespace mmpi::mp;

namespace {

QTextStream &out()
{
    static QTextStream stream(stdout);
    return stream;
}

void say(const QString &line)
{
    out() << line << Qt::endl; // flushed: a test or a person reads it live
}

template<Primitive T>
QString listValues(const Received &received, int shown)
{
    auto values = decodeValues<T>(received.status.typeCode, qMin(received.status.kept, shown), received.items);
    if (!values)
        return values.error().toString();
    QStringList parts;
    for (const T &value : *values) {
        if constexpr (std::is_same_v<T, char16_t>)
            parts.append(QStringLiteral("U+%1").arg(quint16(value), 4, 16, QLatin1Char('0')));
        else if constexpr (sizeof(T) == 1)
            parts.append(QString::number(int(value)));
        else
            parts.append(QString::number(value));
    }
    if (received.status.kept > shown)
        parts.append(QStringLiteral("..."));
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

// Items shown as the type the code stands for (code 1 as signed bytes: PJ
// sends its bytes with Boolean's code).
QString describeItems(const Received &received)
{
    const int shown = 8;
    switch (ItemType(received.status.typeCode)) {
    case ItemType::Boolean:
    case ItemType::Byte:
    case ItemType::SignedByte: return listValues<qint8>(received, shown);
    case ItemType::UnsignedByte: return listValues<quint8>(received, shown);
    case ItemType::Short:
    case ItemType::SignedShort: return listValues<qint16>(received, shown);
    case ItemType::UnsignedShort: return listValues<quint16>(received, shown);
    case ItemType::Int: return listValues<qint32>(received, shown);
    case ItemType::Long: return listValues<qint64>(received, shown);
    case ItemType::Char: return listValues<char16_t>(received, shown);
    case ItemType::Float: return listValues<float>(received, shown);
    case ItemType::Double: return listValues<double>(received, shown);
    default: return QStringLiteral("(%1 bytes of Java serialization)").arg(received.items.size());
    }
}

class Echo : public QObject
{
public:
    Echo(ChannelGroup *group, int maxMessages, bool exitWhenChannelEnds)
        : m_group(group), m_toReceive(maxMessages), m_toEcho(maxMessages), m_exitWhenChannelEnds(exitWhenChannelEnds)
    {
        connect(group, &ChannelGroup::channelOpened, this, [](Channel *channel) {
            say(QStringLiteral("open: far id %1 (%2)").arg(channel->farId()).arg(channel->peerName()));
        });
        connect(group, &ChannelGroup::channelClosed, this, [this](Channel *channel) {
            say(QStringLiteral("closed: far id %1 (%2)").arg(channel->farId()).arg(channel->peerName()));
            channelEnded(channel, 0);
        });
        connect(group, &ChannelGroup::channelFailed, this, [this](Channel *channel, const Error &error) {
            say(QStringLiteral("failed: %1 (%2): %3").arg(channel->farId()).arg(channel->peerName(), error.toString()));
            channelEnded(channel, 1);
        });
    }

    void start() { post(); }

private:
    void post()
    {
        m_group->receive(ReceiveSpec::anyMessage()).onFinished(this, [this](const Result<Received> &outcome) {
            if (!outcome)
                return; // cancelled: the group closed
            echo(*outcome);
            if (m_toReceive > 0 && --m_toReceive == 0)
                return; // the last echo ends the run
            post();
        });
    }

    void echo(const Received &received)
    {
        const QString line = describeMessage(received);
        Channel *channel = received.status.channel.data();
        if (!channel) {
            say(line + QStringLiteral(" -> not echoed: the channel is gone"));
            echoDone();
            return;
        }
        const Send sent = sendBack(channel, received);
        if (!sent.isFinished())
            holdReading(channel);
        const quint8 code = replyCode(received.status);
        sent.onFinished(this, [this, line, code, channel = QPointer<Channel>(channel)](const Result<void> &done) {
            say(line + (done ? QStringLiteral(" -> echoed as %1").arg(codeName(code))
                             : QStringLiteral(" -> not echoed: ") + done.error().toString()));
            if (channel)
                releaseReading(channel);
            echoDone();
        });
    }

    static QString describeMessage(const Received &received)
    {
        const Status &status = received.status;
        return QStringLiteral("message: far id %1 tag %2 %3 N=%4 %5")
            .arg(status.farId).arg(status.tag).arg(codeName(status.typeCode))
            .arg(status.count).arg(describeItems(received));
    }

    // Back with the code PJ would use; an object message as it came, the only
    // object message MMPI sends.
    static Send sendBack(Channel *channel, const Received &received)
    {
        const Status &status = received.status;
        if (status.isObject())
            return channel->sendNoWait(status.tag, *received.objectMessage);
        return channel->sendNoWait(Message{status.tag, status.typeCode, status.kept, received.items});
    }

    static quint8 replyCode(const Status &status)
    {
        return status.isObject() ? status.typeCode : *sendCode(*typeFromCode(status.typeCode));
    }

    // Reading on while the peer leaves its echoes unread would hold every
    // echo in our memory; paused, TCP holds the peer instead.
    void holdReading(Channel *channel)
    {
        if (m_held.contains(channel))
            return;
        m_held.insert(channel);
        channel->pauseReading();
        qCWarning(lcTools).noquote() << QStringLiteral(
            "mmpi-mp-echo: far id %1 (%2) leaves its echoes unread (%3 bytes unwritten, high-water mark %4): "
            "not reading from it until it reads")
                                            .arg(channel->farId()).arg(channel->peerName()).arg(channel->bytesToWrite())
                                            .arg(m_group->options().highWaterMark);
    }

    void releaseReading(Channel *channel)
    {
        if (!m_held.contains(channel) || channel->waitingSends() > 0)
            return;
        m_held.remove(channel);
        channel->resumeReading();
        qCInfo(lcTools).noquote() << QStringLiteral("mmpi-mp-echo: far id %1 (%2) reads its echoes again: reading from it again")
                                         .arg(channel->farId()).arg(channel->peerName());
    }

    void echoDone()
    {
        if (m_toEcho > 0 && --m_toEcho == 0) {
            m_group->close();
            QCoreApplication::exit(0);
        }
    }

    void channelEnded(Channel *channel, int exitCode)
    {
        m_held.remove(channel);
        channel->deleteLater();
        if (m_exitWhenChannelEnds)
            QCoreApplication::exit(exitCode);
    }

    ChannelGroup *m_group;
    int m_toReceive;
    int m_toEcho;
    bool m_exitWhenChannelEnds;
    QSet<Channel *> m_held;
};

int usageError(const QString &message)
{
    QTextStream(stderr) << "mmpi-mp-echo: " << message << "\n(see --help)\n";
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("mmpi-mp-echo"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "An edu.rit.mp (Parallel Java) peer that echoes every message back with the same tag and type.\n"
        "Listen:  mmpi-mp-echo --listen PORT --id N     (a PJ program connects to it)\n"
        "Connect: mmpi-mp-echo --connect HOST:PORT --id N (it connects to a listening PJ program)\n"
        "One line per event on stdout; bytes (codes 1/2), unsigned 8-bit (12) and unsigned 16-bit (13)\n"
        "go back with PJ's codes 1, 10 and 11; object messages (code 9) go back verbatim. A peer that\n"
        "leaves more than the high-water mark of echoes unread is not read until it reads."));
    parser.addHelpOption();
    const QCommandLineOption listenOption(QStringLiteral("listen"), QStringLiteral("Listen on PORT (0: any free port)."), QStringLiteral("PORT"));
    const QCommandLineOption bindOption(QStringLiteral("bind"), QStringLiteral("Address to listen on (default: all)."), QStringLiteral("ADDRESS"), QStringLiteral("0.0.0.0"));
    const QCommandLineOption connectOption(QStringLiteral("connect"), QStringLiteral("Connect to HOST:PORT; exit when that channel ends."), QStringLiteral("HOST:PORT"));
    const QCommandLineOption idOption(QStringLiteral("id"), QStringLiteral("Our channel group ID (PJ's cluster rank)."), QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption timeoutOption(QStringLiteral("id-timeout"), QStringLiteral("How long a peer may take to send its ID (default 30000)."), QStringLiteral("MS"), QStringLiteral("30000"));
    const QCommandLineOption maxSizeOption(QStringLiteral("max-message-size"), QStringLiteral("Largest accepted message payload (default 67108864)."), QStringLiteral("BYTES"), QStringLiteral("67108864"));
    const QCommandLineOption countOption(QStringLiteral("count"), QStringLiteral("Exit after echoing N messages (default: never)."), QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption markOption(QStringLiteral("high-water-mark"), QStringLiteral("Unwritten echo bytes per peer before it is not read (default 4194304)."), QStringLiteral("BYTES"), QStringLiteral("4194304"));
    parser.addOptions({listenOption, bindOption, connectOption, idOption, timeoutOption, maxSizeOption, countOption, markOption});
    parser.process(app);

    if (parser.isSet(listenOption) == parser.isSet(connectOption))
        return usageError(QStringLiteral("give exactly one of --listen PORT and --connect HOST:PORT"));
    bool ok = false;
    const qint32 id = parser.value(idOption).toInt(&ok);
    if (!ok)
        return usageError(QStringLiteral("--id needs an integer"));
    ChannelGroupOptions options;
    const int timeoutMs = parser.value(timeoutOption).toInt(&ok);
    if (!ok || timeoutMs <= 0)
        return usageError(QStringLiteral("--id-timeout needs a positive number of milliseconds"));
    options.idTimeout = std::chrono::milliseconds(timeoutMs);
    options.maxMessageSize = parser.value(maxSizeOption).toLongLong(&ok);
    if (!ok || options.maxMessageSize < 0)
        return usageError(QStringLiteral("--max-message-size needs a byte count"));
    options.highWaterMark = parser.value(markOption).toLongLong(&ok);
    if (!ok || options.highWaterMark < 0)
        return usageError(QStringLiteral("--high-water-mark needs a byte count"));
    // A receive is always posted, so the queue only bridges a delivery and the
    // next receive; kept small, what a peer that stops reading costs stays
    // near the high-water mark instead of growing by the default 64 MiB queue.
    options.maxQueuedBytes = 1024 * 1024;
    const int count = parser.value(countOption).toInt(&ok);
    if (!ok || count < 0)
        return usageError(QStringLiteral("--count needs a number"));

    ChannelGroup group(id, options);
    Echo echo(&group, count, parser.isSet(connectOption));
    if (parser.isSet(listenOption)) {
        const uint port = parser.value(listenOption).toUInt(&ok);
        QHostAddress address;
        if (!ok || port > 65535)
            return usageError(QStringLiteral("--listen needs a port number"));
        if (!address.setAddress(parser.value(bindOption)))
            return usageError(QStringLiteral("--bind needs an IP address"));
        if (auto listening = group.listen(address, quint16(port)); !listening) {
            QTextStream(stderr) << "mmpi-mp-echo: " << listening.error().toString() << "\n";
            return 1;
        }
        say(QStringLiteral("listening: %1:%2 id %3").arg(address.toString()).arg(group.serverPort()).arg(id));
    } else {
        const QString target = parser.value(connectOption);
        const qsizetype colon = target.lastIndexOf(QLatin1Char(':'));
        const uint port = colon > 0 ? target.mid(colon + 1).toUInt(&ok) : 0;
        if (colon <= 0 || !ok || port == 0 || port > 65535)
            return usageError(QStringLiteral("--connect needs HOST:PORT"));
        say(QStringLiteral("connecting: %1 id %2").arg(target).arg(id));
        group.connectTo(target.left(colon), quint16(port));
    }
    echo.start();
    return app.exec();
}
