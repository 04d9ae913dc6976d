// Hand-derived edu.rit.mp byte vectors shared by the mp tests: each written out
// from the rules (magic 01 cb f8 54, tag, code, N, big-endian items), not
// produced by the code under test, and a Java serialization stream Java wrote.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QtEndian>

namespace mpvectors {

// Hex with spaces for readability.
inline QByteArray hex(const char *text)
{
    return QByteArray::fromHex(QByteArray(text).replace(' ', ""));
}

// Our channel group ID / a message header prefix.
inline const char *const magic = "01 cb f8 54";

// What MMPI (and PJ) sends, tag 7 unless said otherwise.
inline QByteArray boolMsg() { return hex("01cbf854 00000007 01 00000003 01 00 01"); }         // {true,false,true}
inline QByteArray byteMsg() { return hex("01cbf854 00000007 01 00000002 ff 7f"); }            // Byte {-1,127}: code 1, PJ's alias
inline QByteArray signed8Msg() { return hex("01cbf854 00000007 0a 00000002 80 05"); }         // SignedByte {-128,5}
inline QByteArray unsigned8Msg() { return hex("01cbf854 00000007 0a 00000002 ff 00"); }       // UnsignedByte {255,0}: code 10, alias
inline QByteArray shortMsg() { return hex("01cbf854 00000007 03 00000002 fffe 0102"); }       // Short {-2,258}
inline QByteArray signed16Msg() { return hex("01cbf854 00000007 0b 00000001 8000"); }         // SignedShort {-32768}
inline QByteArray unsigned16Msg() { return hex("01cbf854 00000007 0b 00000002 ffff 0001"); }  // UnsignedShort {65535,1}: code 11, alias
inline QByteArray intMsg() { return hex("01cbf854 00000007 04 00000002 00000001 ffffffff"); } // Int {1,-1}
inline QByteArray longMsg() { return hex("01cbf854 00000007 05 00000001 0102030405060708"); } // Long {0x0102030405060708}
inline QByteArray charMsg() { return hex("01cbf854 00000007 06 00000002 0041 20ac"); }        // Char {'A', U+20AC}
inline QByteArray floatMsg() { return hex("01cbf854 00000007 07 00000002 3f800000 c0200000"); } // Float {1.0, -2.5}
inline QByteArray doubleMsg() { return hex("01cbf854 fffffffe 08 00000002 3ff0000000000000 bfe0000000000000"); } // tag -2, Double {1.0, -0.5}
inline QByteArray emptyIntMsg() { return hex("01cbf854 00000000 04 00000000"); }              // tag 0, Int, N=0

// Codes PJ never sends, which MMPI accepts on receive.
inline QByteArray code2Msg() { return hex("01cbf854 00000001 02 00000002 ff 01"); }  // Byte proper {-1,1}
inline QByteArray code12Msg() { return hex("01cbf854 00000002 0c 00000002 ff 80"); } // UnsignedByte proper {255,128}
inline QByteArray code13Msg() { return hex("01cbf854 00000003 0d 00000001 fffe"); }  // UnsignedShort proper {65534}
// An object message: N counts the bytes of one Java serialization stream.
inline QByteArray objectMsg() { return hex("01cbf854 00000004 09 00000006 aced0005 7704"); }

// A real Java serialization stream, written by ObjectOutputStream (data/README.md
// says how); empty if the file cannot be read.
inline QByteArray javaObjectStream()
{
    QFile file(QStringLiteral(MMPI_MP_DATA_DIR "/objectstream.bin"));
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}
// That stream as PJ sends it: an object message with N = its length, tag 11.
inline QByteArray javaObjectMsg()
{
    const QByteArray stream = javaObjectStream();
    QByteArray n(4, 0);
    qToBigEndian(qint32(stream.size()), n.data());
    return hex("01cbf854 0000000b 09") + n + stream;
}

} // namespace mpvectors
