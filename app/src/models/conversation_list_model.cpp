// ConversationListModel: replaces its rows with each fresh listing, emitting the smallest change
// it can see cheaply (same ids in the same order: dataChanged only).
#include "models/conversation_list_model.h"

#include <QDateTime>
#include <QLocale>

#include "i18n/localizer.h"

namespace alap::app {

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : count(); }

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto& c = m_rows[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case TitleRole: return QString::fromStdString(c.title);
    case IdRole: return qint64(c.id);
    case PinnedRole: return c.pinned;
    case CurrentRole: return c.id == m_currentId;
    case UpdatedRole:
      return formatDateTime(QDateTime::fromMSecsSinceEpoch(c.updated_at).toLocalTime());
    default: return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{IdRole, "conversationId"}, {TitleRole, "title"}, {PinnedRole, "pinned"}, {UpdatedRole, "updated"}, {CurrentRole, "current"}};
}

void ConversationListModel::setConversations(std::vector<alap::store::Conversation> rows) {
  bool sameIds = rows.size() == m_rows.size();
  for (size_t i = 0; sameIds && i < rows.size(); ++i) sameIds = rows[i].id == m_rows[i].id;
  if (sameIds) {
    m_rows = std::move(rows);
    if (!m_rows.empty()) emit dataChanged(index(0), index(count() - 1));
    return;
  }
  beginResetModel();
  m_rows = std::move(rows);
  endResetModel();
  emit countChanged();
}

int ConversationListModel::rowOfId(qint64 id) const {
  for (size_t i = 0; i < m_rows.size(); ++i)
    if (m_rows[i].id == id) return int(i);
  return -1;
}

qint64 ConversationListModel::idAt(int row) const {
  return row >= 0 && row < count() ? m_rows[size_t(row)].id : 0;
}

void ConversationListModel::setCurrentId(qint64 id) {
  if (id == m_currentId) return;
  const int before = rowOfId(m_currentId);
  m_currentId = id;
  const int after = rowOfId(id);
  for (int row : {before, after})
    if (row >= 0) emit dataChanged(index(row), index(row), {CurrentRole});
}

QString ConversationListModel::titleOf(qint64 id) const {
  const int row = rowOfId(id);
  return row < 0 ? QString() : QString::fromStdString(m_rows[size_t(row)].title);
}

}  // namespace alap::app
