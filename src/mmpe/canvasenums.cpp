#include <mmpi/mmpe/canvasenums.h>

#include <QMetaEnum>

namespace mmpi {

QString canvasOpcodeName(CanvasOpcode opcode)
{
    const char *key = QMetaEnum::fromType<CanvasOpcode>().valueToKey(int(opcode));
    if (key)
        return QString::fromLatin1(key);
    return QStringLiteral("opcode 0x%1").arg(quint8(opcode), 2, 16, QLatin1Char('0'));
}

} // namespace mmpi
