// edu.rit.mp type codes as Parallel Java really uses them: the constants (the
// same numbers as mmpi::ItemType), the item sizes a receiver derives N's byte
// count from, and the aliasing PJ's buffer classes apply when they send.
#pragma once

#include <mmpi/wire/itemtype.h>

#include <QString>

#include <optional>

namespace mmpi::mp {

// The first four bytes of every message: 30144596 = 0x01CBF854.
inline constexpr quint32 Magic = 30144596u;
// magic (4) + tag (4) + type code (1) + N (4).
inline constexpr int HeaderSize = 13;
// Each side of a connection sends its channel group ID, one int32.
inline constexpr int IdSize = 4;

// The item type a code read off the wire stands for, nullopt for codes that are
// not edu.rit.mp's (0 and 14..255). Code 9 is Object.
std::optional<ItemType> typeFromCode(quint8 code);

// Bytes per item for a code; for Object (9) N already counts bytes, so 1.
// Precondition: typeFromCode(code) has a value.
int bytesPerItem(quint8 code);

// The code PJ puts on the wire for a message of `type` items: Byte goes as 1
// (Boolean's code), UnsignedByte as 10 and UnsignedShort as 11, every other
// type as its own code. Object has no send code: MMPI writes no code 9 of its
// own (it only sends back a received one, Channel::send(tag, ObjectMessage)),
// so this returns nullopt for it (and for None).
std::optional<quint8> sendCode(ItemType type);

// "Int (4)", "code 14 (unknown)".
QString codeName(quint8 code);

} // namespace mmpi::mp
