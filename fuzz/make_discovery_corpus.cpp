// Writes the seed corpus of fuzz_discovery: beacon datagrams of version 2
// (one host, eight, IPv4 and IPv6, "any") and version 1, and join codes of
// one to four addresses, typed in capitals and as a person might, and typed
// root addresses (IPv4, names, international names, ports). Run:
// fuzz_make_discovery_corpus <dir>.
#include "seedfiles.h"
#include "tcpadvert.h"

#include <mmpi/world/joincode.h>

using namespace mmpi;

namespace {

bool writeDatagram(const QString &dir, const QString &name, const TcpAdvert &advert)
{
    const auto bytes = TcpAdvert::encode(advert);
    return bytes && fuzz::writeSeedFile(dir, name, {QByteArrayView("\0", 1), *bytes});
}

bool writeCode(const QString &dir, const QString &name, int addresses, bool typed)
{
    QList<QHostAddress> list;
    for (int i = 0; i < addresses; ++i)
        list << QHostAddress(QStringLiteral("192.168.%1.%2").arg(i).arg(10 + i));
    const auto code = JoinCode::create(list, 47474, QByteArray::fromHex("a1b2c3d4e5f6"));
    if (!code)
        return false;
    const QString text = typed ? code->toString().toLower().replace(u'-', u' ') : code->toString();
    return fuzz::writeSeedFile(dir, name, {QByteArrayView("\1", 1), text.toLatin1()});
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    QList<QHostAddress> eight;
    for (int i = 1; i <= TcpAdvert::MaxHosts; ++i)
        eight << QHostAddress(QStringLiteral("10.0.%1.1").arg(i));
    bool ok = writeDatagram(dir, QStringLiteral("v2-one"), {QStringLiteral("blue"), QStringLiteral("n1"),
                                                           {QHostAddress(QStringLiteral("10.0.0.1"))}, 4242})
        && writeDatagram(dir, QStringLiteral("v2-eight"), {QStringLiteral("wörld"), QStringLiteral("node"), eight, 1})
        && writeDatagram(dir, QStringLiteral("v2-mixed"),
                         {QStringLiteral("blue"), QStringLiteral("n2"),
                          {QHostAddress(QStringLiteral("fd00::1")), QHostAddress(QHostAddress::AnyIPv4)}, 65535});
    // Version 1 as the previous release writes it.
    ok = ok && fuzz::writeSeedFile(dir, QStringLiteral("v1"),
                                   {QByteArrayView("\0MMPB\1\x10\x92\4blue\2n1\x09" "127.0.0.1", 26)});
    for (int n = 1; n <= JoinCode::MaxAddresses; ++n)
        ok = ok && writeCode(dir, QStringLiteral("code-%1").arg(n), n, false)
            && writeCode(dir, QStringLiteral("code-%1-typed").arg(n), n, true);
    int typed = 0;
    for (const char *address : {"192.168.1.20", "192.168.1.20:47474", "root.lan", "Root.Lan.:5000",
                                "bücher.example", "10.0.1", "[fd00::1]:5000", "tcp://10.0.0.1:1"})
        ok = ok && fuzz::writeSeedFile(dir, QStringLiteral("address-%1").arg(++typed),
                                       {QByteArrayView("\2", 1), QByteArrayView(address)});
    return fuzz::corpusStatus(ok, dir);
}
