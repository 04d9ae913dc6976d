// ScoreModel: the score list beside the arena, one row per player that was
// ever in the game: colour, score, and whether it plays (joined), is out of
// range (frozen) or was removed after its app ended. Removed players keep
// their row and last score.
#pragma once

#include "lightcycles.h"

#include <QAbstractListModel>
#include <QColor>

namespace mmpi::game {

class ScoreModel : public QAbstractListModel
{
    Q_OBJECT
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum class Status { Joined, Frozen, Removed };
    Q_ENUM(Status)
    enum Role { PlayerRole = Qt::UserRole + 1, NameRole, ColorRole, ScoreRole, StatusRole, StatusNameRole,
                AliveRole, SelfRole };

    explicit ScoreModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setLocalPlayer(int player);
    // Follow the state after a tick: new players appear, scores and frozen
    // flags change; players missing from the state are marked removed.
    void update(const LightCycles &state);
    void markRemoved(int player);
    // The row of `player` as an object (for QML and tests); empty if unknown.
    Q_INVOKABLE QVariantMap get(int player) const;
    static QString statusName(Status status);

Q_SIGNALS:
    void countChanged();

private:
    struct Row
    {
        int player = -1;
        int score = 0;
        Status status = Status::Joined;
        bool alive = false;
    };
    qsizetype rowOf(int player) const;
    void setRow(qsizetype at, const Row &row);

    QList<Row> m_rows; // by player
    int m_localPlayer = -1;
};

} // namespace mmpi::game
