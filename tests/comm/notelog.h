// Test helper: counts the debug notes of the mmpi.comm category that contain
// a given text (the matchers say so when a large message is written straight
// into its destination), swallowing the category's other debug output.
#pragma once

#include <QLoggingCategory>
#include <QString>

#include <atomic>

namespace mmpi::test {

class NoteLog
{
public:
    // One at a time: a second would install itself as the first's "previous".
    explicit NoteLog(QLatin1String note)
    {
        if (s_active.exchange(true))
            qFatal("NoteLog: only one may count at a time");
        s_note = note;
        s_count = 0;
        s_previous = qInstallMessageHandler(handle);
        QLoggingCategory::setFilterRules(QStringLiteral("mmpi.comm.debug=true"));
    }
    ~NoteLog()
    {
        QLoggingCategory::setFilterRules(QString());
        qInstallMessageHandler(s_previous);
        s_active = false;
    }
    NoteLog(const NoteLog &) = delete;
    NoteLog &operator=(const NoteLog &) = delete;

    int count() const { return s_count.load(); }

private:
    static void handle(QtMsgType type, const QMessageLogContext &context, const QString &message)
    {
        if (message.contains(s_note))
            ++s_count;
        else if (type != QtDebugMsg && s_previous)
            s_previous(type, context, message);
    }
    static inline std::atomic<bool> s_active = false;
    static inline QLatin1String s_note;
    static inline std::atomic<int> s_count = 0;
    static inline QtMessageHandler s_previous = nullptr;
};

} // namespace mmpi::test
