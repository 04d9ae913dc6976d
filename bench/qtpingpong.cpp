// qt-pingpong: what a hand-written, single-threaded Qt program gets over TCP:
// QTcpServer and QTcpSocket with LowDelayOption, one process per side (fork()
// before the QCoreApplication), a readyRead-driven state machine, no waitFor*.
#include "pingpong.h"

#include <QCoreApplication>
#include <QHostAddress>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <chrono>
#include <cstdio>
#include <vector>

namespace {

// One side of the ping-pong. Rank 0 (timing) sends a message and times the
// round trip when the whole reply is in; rank 1 sends each whole message back.
class Side : public QObject
{
public:
    Side(const pp_options &options, bool timing)
        : m_out(pp_largest_size(&options), 'x'), m_in(m_out.size()), m_timing(timing)
    {
        if (!pp_schedule_start(&m_schedule, &options))
            qFatal("qt-pingpong: out of memory");
    }
    ~Side() override { pp_schedule_free(&m_schedule); }

    void attach(QTcpSocket *socket)
    {
        m_socket = socket;
        connect(socket, &QTcpSocket::readyRead, this, &Side::handleReadyRead);
        connect(socket, &QTcpSocket::errorOccurred, this, &Side::handleError);
        connect(socket, &QTcpSocket::disconnected, this, &Side::handleDisconnected);
        if (socket->state() == QAbstractSocket::ConnectedState)
            handleConnected();
        else
            connect(socket, &QTcpSocket::connected, this, &Side::handleConnected);
    }

private:
    bool finished() const { return pp_schedule_finished(&m_schedule); }

    void handleConnected()
    {
        m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        if (m_timing)
            sendRequest();
    }

    void sendRequest()
    {
        m_start = pp_now_us();
        m_socket->write(m_out.data(), qint64(pp_schedule_size(&m_schedule)));
    }

    // Reads straight into m_in, one message at a time.
    void handleReadyRead()
    {
        while (!finished()) {
            const size_t size = pp_schedule_size(&m_schedule);
            const qint64 n = m_socket->read(m_in.data() + m_received, qint64(size - m_received));
            if (n <= 0)
                return;
            m_received += size_t(n);
            if (m_received == size) {
                m_received = 0;
                if (m_timing)
                    handleReply();
                else
                    handleRequest(size);
            }
        }
    }

    void handleReply()
    {
        pp_schedule_record(&m_schedule, pp_now_us() - m_start);
        if (!finished()) {
            sendRequest();
            return;
        }
        pp_print(&m_schedule, "qt-tcp");
        QCoreApplication::exit(0);
    }

    void handleRequest(size_t size)
    {
        m_socket->write(m_in.data(), qint64(size));
        pp_schedule_record(&m_schedule, 0);
        if (finished())
            m_socket->disconnectFromHost(); // after the reply is written
    }

    void handleError()
    {
        if (finished())
            return; // the peer may close first once it has everything
        std::fprintf(stderr, "qt-pingpong: rank %d: %s\n", m_timing ? 0 : 1,
                     qPrintable(m_socket->errorString()));
        QCoreApplication::exit(1);
    }

    void handleDisconnected() { QCoreApplication::exit(finished() ? 0 : 1); }

    pp_schedule m_schedule;
    std::vector<char> m_out;
    std::vector<char> m_in;
    QTcpSocket *m_socket = nullptr;
    size_t m_received = 0;
    double m_start = 0;
    bool m_timing;
};

// Rank 0 listens on an ephemeral port and tells rank 1 which one over a pipe.
int runRank0(int argc, char **argv, const pp_options &options, int portPipe)
{
    QCoreApplication app(argc, argv);
    QTcpServer server;
    const quint16 port = server.listen(QHostAddress::LocalHost, 0) ? server.serverPort() : 0;
    if (pp_tell_port(portPipe, port) != 0 || port == 0) {
        std::fprintf(stderr, "qt-pingpong: cannot listen on 127.0.0.1: %s\n",
                     qPrintable(server.errorString()));
        return 1;
    }
    Side side(options, true);
    QTimer deadline; // for rank 1 to connect
    deadline.callOnTimeout([] {
        std::fputs("qt-pingpong: rank 1 did not connect within 10 s\n", stderr);
        QCoreApplication::exit(1);
    });
    deadline.start(std::chrono::seconds(10));
    QObject::connect(&server, &QTcpServer::newConnection, &side, [&] {
        deadline.stop();
        side.attach(server.nextPendingConnection());
        server.close();
    });
    return app.exec();
}

int runRank1(int argc, char **argv, const pp_options &options, int portPipe)
{
    const quint16 port = pp_learn_port(portPipe);
    if (port == 0)
        return 1;
    QCoreApplication app(argc, argv);
    Side side(options, false);
    QTcpSocket socket;
    side.attach(&socket);
    socket.connectToHost(QHostAddress::LocalHost, port);
    return app.exec();
}

} // namespace

int main(int argc, char *argv[])
{
    pp_options options;
    int status = pp_parse_options(argc, argv, &options);
    if (status != PP_RUN)
        return status;
    int portPipe = -1;
    const pid_t child = pp_fork_rank1(&portPipe);
    if (child < 0) {
        std::perror("qt-pingpong: pipe/fork");
        return 1;
    }
    if (child == 0)
        return runRank1(argc, argv, options, portPipe);
    return pp_wait_child(child, runRank0(argc, argv, options, portPipe));
}
