// LineForwarder: copies one output stream of one node to mmpirun's own stream
// a whole line at a time, prefixed "[rank] ", so lines of different nodes never
// mix within a line however the node's writes were split.
#pragma once

#include <QByteArray>

#include <cstdio>

namespace mmpi::tools {

class LineForwarder
{
public:
    // A line longer than this without a newline is forwarded in pieces of this
    // size, so a node that never writes '\n' cannot make mmpirun's memory grow.
    static constexpr qsizetype MaxLineLength = 64 * 1024;

    LineForwarder(QByteArray prefix, std::FILE *sink);

    // Forwards every complete line in `data` (with what was held before) and
    // holds the rest until its newline arrives.
    void append(const QByteArray &data);
    // Forwards a held partial line, adding the missing newline; for when the node has exited.
    void flush();

private:
    void write(const QByteArray &lines);

    QByteArray m_prefix;
    std::FILE *m_sink;
    QByteArray m_pending;
};

} // namespace mmpi::tools
