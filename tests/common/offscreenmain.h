// MMPI_OFFSCREEN_TEST_MAIN(TestObject): the main() of a test that paints
// (text needs fonts, hence a QGuiApplication) but needs no display: the
// offscreen platform unless QT_QPA_PLATFORM says otherwise.
#pragma once

#include <QGuiApplication>
#include <QTest>

#define MMPI_OFFSCREEN_TEST_MAIN(TestObject)                                                                        \
    int main(int argc, char **argv)                                                                                 \
    {                                                                                                               \
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))                                                         \
            qputenv("QT_QPA_PLATFORM", "offscreen");                                                                \
        QGuiApplication app(argc, argv);                                                                            \
        TestObject test;                                                                                            \
        return QTest::qExec(&test, argc, argv);                                                                     \
    }
