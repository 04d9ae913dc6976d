// SimProfile: the numbers that make a simulated link behave like a given radio
// (one-way latency and bandwidth), and the built-in profiles the sim transport
// offers by name. Why each number was chosen: docs/guide/transports.md, "sim".
#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace mmpi {

struct SimProfile
{
    QString name;
    // One-way delay from the moment a frame has left the radio until the peer has it.
    qint64 latencyMs = 0;
    // Frame bytes (header and payload) per second the radio sends; 0 is unlimited.
    qint64 bandwidth = 0;

    // The profile named `name`, if there is one.
    static std::optional<SimProfile> builtIn(const QString &name);
    // Every built-in profile, in the order the documentation lists them.
    static QList<SimProfile> builtIns();
    static QStringList builtInNames();
};

} // namespace mmpi
