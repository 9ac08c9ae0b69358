// ConversationListModel: the sidebar's conversations (pinned first, then most recent), as the
// store lists them. Not a filter: search results have their own model.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <vector>

#include "core/store/store.h"

namespace alap::app {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("ConversationListModel is provided by ChatController")
  Q_PROPERTY(int count READ count NOTIFY countChanged)

 public:
  enum Role { IdRole = Qt::UserRole + 1, TitleRole, PinnedRole, UpdatedRole, CurrentRole };
  Q_ENUM(Role)

  explicit ConversationListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  int count() const { return int(m_rows.size()); }

  void setConversations(std::vector<alap::store::Conversation> rows);
  Q_INVOKABLE int rowOfId(qint64 id) const;
  Q_INVOKABLE qint64 idAt(int row) const;
  QString titleOf(qint64 id) const;
  // The open conversation: its row has the "current" role true (the view highlights it).
  void setCurrentId(qint64 id);

 signals:
  void countChanged();

 private:
  std::vector<alap::store::Conversation> m_rows;
  qint64 m_currentId = 0;
};

}  // namespace alap::app
