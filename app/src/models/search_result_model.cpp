// SearchResultModel: rows of SearchHit with styled snippets.
#include "models/search_result_model.h"

namespace alap::app {

SearchResultModel::SearchResultModel(QObject* parent) : QAbstractListModel(parent) {}

int SearchResultModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : count(); }

QVariant SearchResultModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto& h = m_rows[size_t(index.row())];
  switch (role) {
    case ConversationIdRole: return qint64(h.conversation_id);
    case MessageIdRole: return qint64(h.message_id);
    case Qt::DisplayRole:
    case TitleRole: return QString::fromStdString(h.conversation_title);
    case SnippetRole: return snippetToStyledText(QString::fromStdString(h.snippet));
    default: return {};
  }
}

QHash<int, QByteArray> SearchResultModel::roleNames() const {
  return {{ConversationIdRole, "conversationId"}, {MessageIdRole, "messageId"}, {TitleRole, "title"},
          {SnippetRole, "snippet"}};
}

void SearchResultModel::setHits(std::vector<alap::store::SearchHit> hits) {
  beginResetModel();
  m_rows = std::move(hits);
  endResetModel();
  emit countChanged();
}

QString SearchResultModel::snippetToStyledText(const QString& snippet) {
  QString s = snippet.toHtmlEscaped();
  s.replace(QLatin1String(kOpenMark), QStringLiteral("<b>"));
  s.replace(QLatin1String(kCloseMark), QStringLiteral("</b>"));
  s.replace(QLatin1Char('\n'), QLatin1Char(' '));
  return s;
}

}  // namespace alap::app
