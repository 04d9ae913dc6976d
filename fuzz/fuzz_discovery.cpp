// libFuzzer target for what discovery reads off the network or from a
// person: the tcp beacon's datagram (TcpAdvert::decode, plugins/tcp) and the
// join code's text (JoinCode::parse, src/world), and a typed root address
// (RootAddress::parse, src/world). Byte 0 chooses: bit 1 set a root address
// (as UTF-8 text), else bit 0 clear a datagram, set a join code (as Latin-1
// text); the rest is the input.
// Besides not crashing, hanging or allocating beyond the input's size:
// - an accepted datagram has 1..8 hosts, a port and both names, and encodes
//   to a datagram that decodes to the same advert; one of version 2 encodes
//   to exactly its own bytes (one spelling per advert);
// - an accepted code has 1..4 addresses and a 6-byte secret, its text reads
//   back to the same code, and that text is the input with separators taken
//   out, capitals made and O, I, L read as 0, 1, 1 (nothing skipped);
// - an accepted root address has a port (the typed one, else the default)
//   and either a unicast IPv4 address with its beacon contact or an ASCII
//   host name of at most 253 characters and no contact; "host:port" of it
//   reads back to the same address.
#include "invariant.h"
#include "tcpadvert.h"

#include <mmpi/world/joincode.h>
#include <mmpi/world/rootaddress.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

using namespace mmpi;

namespace {

void fuzzDatagram(QByteArrayView data)
{
    const auto advert = TcpAdvert::decode(data);
    if (!advert) {
        fuzz::check(advert.error().code == ErrorCode::DiscoveryFailed, "a refused datagram is DiscoveryFailed");
        return;
    }
    fuzz::check(!advert->hosts.isEmpty() && advert->hosts.size() <= TcpAdvert::MaxHosts, "1..8 hosts");
    fuzz::check(advert->port != 0 && !advert->worldName.isEmpty() && !advert->nodeId.isEmpty(), "fields present");
    const auto again = TcpAdvert::encode(*advert);
    fuzz::check(bool(again), "an accepted advert encodes");
    const auto back = TcpAdvert::decode(*again);
    fuzz::check(back && *back == *advert, "an advert decodes to itself");
    if (quint8(data[4]) == TcpAdvert::Version)
        fuzz::check(QByteArrayView(*again) == data, "a version-2 datagram has one spelling");
}

QString normalised(const QString &text)
{
    QString out;
    for (QChar c : text) {
        c = c.toUpper();
        if (c == u'-' || c == u' ')
            continue;
        out += c == u'O' ? u'0' : (c == u'I' || c == u'L') ? u'1' : c;
    }
    return out;
}

void fuzzJoinCode(QByteArrayView data)
{
    const QString text = QString::fromLatin1(data.data(), data.size());
    const auto code = JoinCode::parse(text);
    if (!code) {
        fuzz::check(code.error().code == ErrorCode::BadJoinCode, "a refused code is BadJoinCode");
        return;
    }
    fuzz::check(!code->addresses().isEmpty() && code->addresses().size() <= JoinCode::MaxAddresses, "1..4 addresses");
    fuzz::check(code->secret().size() == JoinCode::SecretSize, "a 6-byte secret");
    const QString written = code->toString();
    const auto back = JoinCode::parse(written);
    fuzz::check(back && *back == *code, "a code's text reads back to it");
    fuzz::check(normalised(text) == QString(written).remove(u'-'), "the text is the code's, nothing skipped");
}

void fuzzRootAddress(QByteArrayView data)
{
    constexpr quint16 defaultPort = 47474;
    const QString text = QString::fromUtf8(data);
    const auto address = RootAddress::parse(text, defaultPort);
    if (!address) {
        fuzz::check(address.error().code == ErrorCode::BadAddress, "a refused address is BadAddress");
        return;
    }
    fuzz::check(address->port() != 0, "a port");
    fuzz::check(text.contains(u':') || address->port() == defaultPort, "no port typed: the default");
    const QString host = address->host();
    if (address->isName()) {
        fuzz::check(!host.isEmpty() && host.size() <= 253 && !host.contains(u':'), "a host name");
        fuzz::check(std::all_of(host.begin(), host.end(), [](QChar c) { return c.unicode() < 0x80; }),
                    "a name in its ASCII form");
        fuzz::check(address->contact().isEmpty(), "a name has no contact before its lookup");
    } else {
        const QHostAddress ip(host);
        fuzz::check(ip.protocol() == QAbstractSocket::IPv4Protocol && !ip.isMulticast() && !ip.isBroadcast(),
                    "a unicast IPv4 address");
        fuzz::check(address->contact() == RootAddress::beaconContact(ip, address->port()), "its contact");
    }
    const auto back = RootAddress::parse(QStringLiteral("%1:%2").arg(host).arg(address->port()), defaultPort);
    fuzz::check(back && *back == *address, "an address reads back to itself");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    if (data[0] & 2)
        fuzzRootAddress(input);
    else if (data[0] & 1)
        fuzzJoinCode(input);
    else
        fuzzDatagram(input);
    return 0;
}
