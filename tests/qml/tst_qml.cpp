// QuickTest runner of the MMPI QML module's tests (tst_*.qml here): the
// module is linked in (MMPI::qml), as in an app; `pixels` compares what a canvas shows
// with plain-QPainter references.
#include "pixelhelper.h"

#include <QQmlContext>
#include <QQmlEngine>
#include <QtQuickTest/quicktest.h>

class Setup : public QObject
{
    Q_OBJECT
public Q_SLOTS:
    void qmlEngineAvailable(QQmlEngine *engine)
    {
        engine->rootContext()->setContextProperty(QStringLiteral("pixels"), new PixelHelper(engine));
    }
};

QUICK_TEST_MAIN_WITH_SETUP(tst_qml, Setup)

#include "tst_qml.moc"
