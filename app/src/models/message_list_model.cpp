// MessageListModel: rows, Markdown blocks and the per-answer stats line.
#include "models/message_list_model.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace alap::app {

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {}

int MessageListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const MessageRow& r = m_rows[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case ContentRole: return r.content;
    case IdRole: return r.id;
    case RoleRole: return r.role;
    case StatusRole: return r.status;
    case StatsRole: return r.statsText;
    case ErrorRole: return r.errorText;
    case BlocksRole: return r.blocks;
    case StreamingRole: return r.status == QLatin1String("streaming");
    case IsLastRole: return index.row() == int(m_rows.size()) - 1;
    default: return {};
  }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
  return {{IdRole, "messageId"},   {RoleRole, "role"},    {ContentRole, "content"},
          {StatusRole, "status"},  {StatsRole, "stats"},  {ErrorRole, "errorText"},
          {BlocksRole, "blocks"},  {StreamingRole, "streaming"}, {IsLastRole, "isLast"}};
}

MessageRow MessageListModel::fromStore(const alap::store::Message& m) {
  MessageRow r;
  r.id = m.id;
  r.role = QString::fromStdString(m.role);
  r.content = QString::fromStdString(m.content);
  r.status = QString::fromLatin1(alap::store::to_string(m.status));
  r.statsText = r.role == QLatin1String("assistant") ? formatStats(QString::fromStdString(m.stats_json)) : QString();
  r.blocks = markdownBlocksToVariant(splitMarkdown(r.content));
  return r;
}

QString MessageListModel::formatStats(const QString& statsJson) {
  const QJsonObject o = QJsonDocument::fromJson(statsJson.toUtf8()).object();
  if (o.isEmpty() || !o.contains(QStringLiteral("tokens"))) return {};
  const QLocale locale;
  const int tokens = o.value(QStringLiteral("tokens")).toInt();
  QStringList parts;
  parts << QCoreApplication::translate("MessageListModel", "%Ln tokens", nullptr, tokens);
  parts << QCoreApplication::translate("MessageListModel", "%1 tokens/s")
               .arg(locale.toString(o.value(QStringLiteral("tokens_per_s")).toDouble(), 'f', 1));
  parts << QCoreApplication::translate("MessageListModel", "first token %1 s")
               .arg(locale.toString(o.value(QStringLiteral("ttft_ms")).toDouble() / 1000.0, 'f', 2));
  const QString mode = o.value(QStringLiteral("cache_mode")).toString();
  if (!mode.isEmpty()) parts << mode;
  return parts.join(QStringLiteral(" · "));
}

void MessageListModel::setMessages(const std::vector<alap::store::Message>& messages) {
  m_holdback.clear();
  m_holdRow = -1;
  beginResetModel();
  m_rows.clear();
  m_rows.reserve(messages.size());
  for (const auto& m : messages) {
    if (m.role == "system") continue;
    m_rows.push_back(fromStore(m));
  }
  endResetModel();
  emit countChanged();
}

void MessageListModel::clear() {
  m_holdback.clear();
  m_holdRow = -1;
  if (m_rows.empty()) return;
  beginResetModel();
  m_rows.clear();
  endResetModel();
  emit countChanged();
}

int MessageListModel::append(const MessageRow& row) {
  const int at = int(m_rows.size());
  beginInsertRows({}, at, at);
  m_rows.push_back(row);
  if (m_rows.back().blocks.isEmpty() && !row.content.isEmpty())
    m_rows.back().blocks = markdownBlocksToVariant(splitMarkdown(row.content));
  endInsertRows();
  if (at > 0) changed(at - 1, {IsLastRole});
  emit countChanged();
  return at;
}

void MessageListModel::appendText(int row, const QString& text) {
  if (row < 0 || row >= count() || text.isEmpty()) return;
  replaceContent(row, m_rows[size_t(row)].content + text);
}

void MessageListModel::appendStreamText(int row, const QString& text) {
  if (row < 0 || row >= count()) return;
  if (row != m_holdRow) {
    m_holdback.clear();
    m_holdRow = row;
  }
  appendText(row, m_holdback.push(text));
}

void MessageListModel::endStream(int row) {
  if (row != m_holdRow) return;
  m_holdRow = -1;
  appendText(row, m_holdback.flush());
}

void MessageListModel::setStatsText(int row, const QString& statsText) {
  if (row < 0 || row >= count()) return;
  m_rows[size_t(row)].statsText = statsText;
  changed(row, {StatsRole});
}

void MessageListModel::setContent(int row, const QString& content) {
  if (row < 0 || row >= count()) return;
  if (row == m_holdRow) {
    m_holdback.clear();
    m_holdRow = -1;
  }
  replaceContent(row, content);
}

void MessageListModel::replaceContent(int row, const QString& content) {
  MessageRow& r = m_rows[size_t(row)];
  r.content = content;
  r.blocks = markdownBlocksToVariant(splitMarkdown(content));
  changed(row, {ContentRole, BlocksRole, Qt::DisplayRole});
}

void MessageListModel::setStatus(int row, const QString& status, const QString& statsText, const QString& errorText) {
  if (row < 0 || row >= count()) return;
  MessageRow& r = m_rows[size_t(row)];
  r.status = status;
  r.statsText = statsText;
  r.errorText = errorText;
  changed(row, {StatusRole, StreamingRole, StatsRole, ErrorRole});
}

void MessageListModel::setId(int row, qint64 id) {
  if (row < 0 || row >= count()) return;
  m_rows[size_t(row)].id = id;
  changed(row, {IdRole});
}

void MessageListModel::truncateAfter(int row) {
  if (row < -1 || row >= count() - 1) return;
  if (m_holdRow > row) {
    m_holdback.clear();
    m_holdRow = -1;
  }
  beginRemoveRows({}, row + 1, count() - 1);
  m_rows.resize(size_t(row + 1));
  endRemoveRows();
  if (row >= 0) changed(row, {IsLastRole});
  emit countChanged();
}

int MessageListModel::rowOfId(qint64 id) const {
  for (size_t i = 0; i < m_rows.size(); ++i)
    if (m_rows[i].id == id) return int(i);
  return -1;
}

void MessageListModel::changed(int row, const QList<int>& roles) {
  const QModelIndex i = index(row);
  emit dataChanged(i, i, roles);
}

}  // namespace alap::app
