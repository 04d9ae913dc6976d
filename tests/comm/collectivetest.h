// Base of the collective test programs: the in-process worlds of the sizes a
// program names, formed before its first test and closed after its last.
#pragma once

#include "commworlds.h"

#include <QObject>
#include <QTest>

#include <memory>

namespace mmpi::test {

class CollectiveTest : public QObject
{
    Q_OBJECT
public:
    explicit CollectiveTest(QList<int> sizes) : m_sizes(std::move(sizes)) {}

protected:
    const CommWorlds &worlds() const { return *m_worlds; }

private Q_SLOTS:
    void initTestCase()
    {
        m_worlds = std::make_unique<CommWorlds>(m_sizes);
        QVERIFY(m_worlds->formed());
    }
    void cleanupTestCase() { m_worlds.reset(); }

private:
    QList<int> m_sizes;
    std::unique_ptr<CommWorlds> m_worlds;
};

} // namespace mmpi::test
