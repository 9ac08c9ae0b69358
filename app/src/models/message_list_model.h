// MessageListModel: the messages of the open conversation, oldest first, with the reply being
// streamed as its last row. Content is split into prose and code blocks here (C++ decides);
// the delegate only shows them. Not the store: ChatController fills it from StoreWorker results.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <vector>

#include "core/store/store.h"
#include "models/grapheme_holdback.h"
#include "models/markdown_blocks.h"

namespace alap::app {

struct MessageRow {
  qint64 id = 0;  // 0 until the store has assigned one
  QString role;   // user, assistant, system
  QString content;
  QString status;  // complete, stopped, error, streaming
  QString statsText;
  QString errorText;
  QVariantList blocks;
};

class MessageListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("MessageListModel is provided by ChatController")
  Q_PROPERTY(int count READ count NOTIFY countChanged)

 public:
  enum Role {
    IdRole = Qt::UserRole + 1,
    RoleRole,
    ContentRole,
    StatusRole,
    StatsRole,
    ErrorRole,
    BlocksRole,
    StreamingRole,
    IsLastRole,
  };
  Q_ENUM(Role)

  explicit MessageListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  int count() const { return int(m_rows.size()); }

  void setMessages(const std::vector<alap::store::Message>& messages);
  void clear();
  int append(const MessageRow& row);  // returns the new row
  void appendText(int row, const QString& text);
  // Streaming: appends only whole grapheme clusters (the trailing one, and one ending in a
  // virama, wait in a GraphemeHoldback) so the view never shows a broken character. endStream
  // shows what was held back. setContent, setMessages and clear drop the held-back text.
  void appendStreamText(int row, const QString& text);
  void endStream(int row);
  QString heldBackText() const { return m_holdback.pending(); }
  // Formatted texts (stats) again in the current default locale, after a language switch.
  void setStatsText(int row, const QString& statsText);
  void setContent(int row, const QString& content);
  void setStatus(int row, const QString& status, const QString& statsText = {}, const QString& errorText = {});
  void setId(int row, qint64 id);
  void truncateAfter(int row);  // removes every row after `row`
  const MessageRow& at(int row) const { return m_rows.at(size_t(row)); }
  int rowOfId(qint64 id) const;

  static MessageRow fromStore(const alap::store::Message& message);
  // "120 tokens · 14.2 tokens/s · first token 0.31 s · k8", digits in the current locale.
  static QString formatStats(const QString& statsJson);

 signals:
  void countChanged();

 private:
  void changed(int row, const QList<int>& roles);
  void replaceContent(int row, const QString& content);  // keeps the held-back text

  std::vector<MessageRow> m_rows;
  GraphemeHoldback m_holdback;
  int m_holdRow = -1;
};

}  // namespace alap::app
