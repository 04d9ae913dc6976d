// libFuzzer target for what discovery reads off the network or from a
// person: the tcp beacon's datagram (TcpAdvert::decode, plugins/tcp) and the
// join code's text (JoinCode::parse, src/world). Byte 0 chooses: bit 0 clear
// a datagram, set a join code (as Latin-1 text); the rest is the input.
// Besides not crashing, hanging or allocating beyond the input's size:
// - an accepted datagram has 1..8 hosts, a port and both names, and encodes
//   to a datagram that decodes to the same advert; one of version 2 encodes
//   to exactly its own bytes (one spelling per advert);
// - an accepted code has 1..4 addresses and a 6-byte secret, its text reads
//   back to the same code, and that text is the input with separators taken
//   out, capitals made and O, I, L read as 0, 1, 1 (nothing skipped).
#include "invariant.h"
#include "tcpadvert.h"

#include <mmpi/world/joincode.h>

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

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    if (data[0] & 1)
        fuzzJoinCode(input);
    else
        fuzzDatagram(input);
    return 0;
}
