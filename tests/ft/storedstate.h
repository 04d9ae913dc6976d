// Test fixture: one node's state and the CheckpointStore that saves it to
// and loads it from a directory of its own.
#pragma once

#include <mmpi/ft/checkpointstore.h>

namespace mmpi::test {

struct StoredState
{
    explicit StoredState(const QString &directory)
    {
        store.setDirectory(directory);
        store.setState([this] { return state; }, [this](const QByteArray &bytes) {
            state = bytes;
            return success();
        });
    }
    StoredState(const StoredState &) = delete; // the store's functions hold `this`

    QByteArray state;
    CheckpointStore store;
};

} // namespace mmpi::test
