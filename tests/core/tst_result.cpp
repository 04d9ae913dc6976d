// Result<T> and Error: the error vocabulary every layer uses.
#include <mmpi/core/result.h>

#include <QTest>

using namespace mmpi;

class TestResult : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void valueAndError();
    void voidResult();
    void errorNamesItsCode();
};

void TestResult::valueAndError()
{
    Result<QString> ok = QStringLiteral("fine");
    QVERIFY(ok);
    QCOMPARE(*ok, QStringLiteral("fine"));
    Result<QString> bad = Error{ErrorCode::BadMagic, QStringLiteral("bad magic 0x1")};
    QVERIFY(!bad);
    QCOMPARE(bad.error().code, ErrorCode::BadMagic);
    QString moved = std::move(ok).value();
    QCOMPARE(moved, QStringLiteral("fine"));
}

void TestResult::voidResult()
{
    Result<void> ok = success();
    QVERIFY(ok);
    QVERIFY(!ok.error().isError());
    Result<void> bad = Error{ErrorCode::LinkClosed, QStringLiteral("gone")};
    QVERIFY(!bad);
    QCOMPARE(bad.error().message, QStringLiteral("gone"));
}

void TestResult::errorNamesItsCode()
{
    const Error e{ErrorCode::FormationTimeout, QStringLiteral("rank 2 never joined")};
    QCOMPARE(e.toString(), QStringLiteral("FormationTimeout: rank 2 never joined"));
    QCOMPARE(Error{}.toString(), QStringLiteral("NoError"));
    QCOMPARE(errorCodeName(ErrorCode::AuthenticationFailed), QStringLiteral("AuthenticationFailed"));
}

QTEST_APPLESS_MAIN(TestResult)
#include "tst_result.moc"
