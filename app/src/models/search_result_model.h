// SearchResultModel: the hits of a full-text search across all messages (FTS5 in the store), with
// the matched words marked in bold for a StyledText label. Not the search itself: ChatController
// runs it on the store thread.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <vector>

#include "core/store/store.h"

namespace alap::app {

class SearchResultModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("SearchResultModel is provided by ChatController")
  Q_PROPERTY(int count READ count NOTIFY countChanged)

 public:
  enum Role { ConversationIdRole = Qt::UserRole + 1, MessageIdRole, TitleRole, SnippetRole };

  // The marks the store is asked to put around matches (control characters: never in text).
  static constexpr const char* kOpenMark = "\x01";
  static constexpr const char* kCloseMark = "\x02";

  explicit SearchResultModel(QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  int count() const { return int(m_rows.size()); }

  void setHits(std::vector<alap::store::SearchHit> hits);
  // HTML-escapes the snippet and turns the marks into <b>..</b>.
  static QString snippetToStyledText(const QString& snippet);

 signals:
  void countChanged();

 private:
  std::vector<alap::store::SearchHit> m_rows;
};

}  // namespace alap::app
