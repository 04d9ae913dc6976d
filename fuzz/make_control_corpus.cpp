// Writes the seed corpus of fuzz_controlmessage: one record of every control
// type as encodeControl writes it (a formation's handshake, rank table and
// resume, with non-ASCII names and the empty and longest strings), each behind
// the fuzzer's frame byte (the tag). Run: fuzz_make_control_corpus <dir>.
#include "controlmessage.h" // src/world
#include "seedfiles.h"

using namespace mmpi;
using namespace mmpi::detail;

namespace {

template<typename Message>
bool writeSeed(const QString &dir, const QString &name, const Message &record)
{
    const Frame frame = encodeControl(record);
    const char control = char(frame.header.tag);
    return fuzz::writeSeedFile(dir, name, {QByteArrayView(&control, 1), frame.payload});
}

QByteArray filled(char c, int size) { return QByteArray(size, c); }

RankTable rankTable(int ranks)
{
    RankTable table;
    for (int rank = 0; rank < ranks; ++rank)
        table.entries.append({rank, QStringLiteral("node-%1").arg(rank),
                              rank == 2 ? QString() : QStringLiteral("tcp://10.0.0.%1:7000").arg(rank + 1)});
    return table;
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    const Challenge challenge{QStringLiteral("wörld"), QStringLiteral("root-1"), filled('\x11', NonceSize),
                              filled('\x12', PublicKeySize)};
    const Response response{LinkPurpose::Mesh, filled('\x22', NonceSize), filled('\x33', MacSize),
                            QStringLiteral("node-2"), 2, QStringLiteral("tcp://127.0.0.1:45001"),
                            filled('\x23', PublicKeySize)};
    const Response rejoin{LinkPurpose::Rejoin, filled('\x44', NonceSize), filled('\x55', MacSize),
                          QString(), NoRank, QString(), filled('\x45', PublicKeySize)};
    const Response invite{LinkPurpose::Invite, filled('\x47', NonceSize), filled('\x56', MacSize),
                          QStringLiteral("node-0"), 0, QStringLiteral("local://mmpi-spare"),
                          filled('\x48', PublicKeySize)};
    const Accept accept{filled('\x66', MacSize), 0, QStringLiteral("bt://00:1A:7D:DA:71:13")};
    const bool ok = writeSeed(dir, QStringLiteral("challenge.bin"), challenge)
        && writeSeed(dir, QStringLiteral("response.bin"), response)
        && writeSeed(dir, QStringLiteral("response-rejoin.bin"), rejoin)
        && writeSeed(dir, QStringLiteral("response-invite.bin"), invite)
        && writeSeed(dir, QStringLiteral("accept.bin"), accept)
        && writeSeed(dir, QStringLiteral("refuse.bin"), Refuse{QStringLiteral("bad MAC ✗")})
        && writeSeed(dir, QStringLiteral("ranktable.bin"), rankTable(4))
        && writeSeed(dir, QStringLiteral("meshready.bin"), MeshReady{})
        && writeSeed(dir, QStringLiteral("start.bin"), Start{})
        && writeSeed(dir, QStringLiteral("abort.bin"), Abort{QString(1024, u'x')})
        && writeSeed(dir, QStringLiteral("resume.bin"), Resume{0xFFFFFFFFFFFFFFFFull})
        && writeSeed(dir, QStringLiteral("keymismatch.bin"), KeyMismatch{})
        && writeSeed(dir, QStringLiteral("rejoined.bin"),
                     Rejoined{{3, QStringLiteral("node-3b"), QStringLiteral("local://mmpi-r3-1")}})
        && writeSeed(dir, QStringLiteral("givenup.bin"),
                     GivenUp{2, QStringLiteral("node-2"), QStringLiteral("no link to rank 2 again within the grace period")})
        && writeSeed(dir, QStringLiteral("joinrefused.bin"),
                     JoinRefused{JoinRefusal::Rejected, QStringLiteral("it was rejected at the root")})
        && writeSeed(dir, QStringLiteral("joinrefused-timeout.bin"),
                     JoinRefused{JoinRefusal::NotConfirmed, QStringLiteral("nobody confirmed it within 60000 ms")});
    return fuzz::corpusStatus(ok, dir);
}
