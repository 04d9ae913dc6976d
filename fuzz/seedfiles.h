// The part every seed-corpus maker shares: the corpus directory from its
// command line, seed files written whole from their parts, and the exit
// status that says whether they all were.
#pragma once

#include <QByteArrayView>
#include <QFile>
#include <QString>

#include <cstdio>
#include <initializer_list>

namespace mmpi::fuzz {

// The one argument, or an empty string after printing the usage.
inline QString corpusDirectory(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return {};
    }
    return QString::fromLocal8Bit(argv[1]);
}

// `name` in `dir` holding `parts` one after the other.
inline bool writeSeedFile(const QString &dir, const QString &name, std::initializer_list<QByteArrayView> parts)
{
    QFile file(dir + u'/' + name);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    for (QByteArrayView part : parts)
        if (file.write(part.data(), part.size()) != part.size())
            return false;
    return true;
}

inline int corpusStatus(bool written, const QString &dir)
{
    if (written)
        return 0;
    std::fprintf(stderr, "cannot write the corpus into %s\n", qPrintable(dir));
    return 1;
}

} // namespace mmpi::fuzz
