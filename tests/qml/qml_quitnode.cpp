// qml_quitnode: a QML app that is nothing but quitnode.qml (a World and how
// it reacts to rank 1 quitting), for tst_qmlquit to start under mmpirun.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QUrl>

int main(int argc, char **argv)
{
    QGuiApplication app(argc, argv);
    QQmlApplicationEngine engine;
    engine.load(QUrl::fromLocalFile(QStringLiteral(QUITNODE_QML)));
    if (engine.rootObjects().isEmpty())
        return 1;
    return app.exec();
}
