// DownloadListModel (download_list_model.h).
#include "download/download_list_model.h"

namespace alap::download {

DownloadListModel::DownloadListModel(DownloadEngine* engine, QObject* parent)
    : QAbstractListModel(parent), m_engine(engine) {
  m_rows = engine->downloads();
  connect(engine, &DownloadEngine::added, this, [this](const QString& id) {
    if (rowOf(id) >= 0) return;
    const auto info = m_engine->info(id);
    if (!info) return;
    beginInsertRows({}, int(m_rows.size()), int(m_rows.size()));
    m_rows.push_back(*info);
    endInsertRows();
    emit countChanged();
    emit activeCountChanged();
  });
  connect(engine, &DownloadEngine::removed, this, [this](const QString& id) {
    const int r = rowOf(id);
    if (r < 0) return;
    beginRemoveRows({}, r, r);
    m_rows.removeAt(r);
    endRemoveRows();
    emit countChanged();
    emit activeCountChanged();
  });
  connect(engine, &DownloadEngine::stateChanged, this, [this](const QString& id) {
    refreshRow(id);
    emit activeCountChanged();
  });
  connect(engine, &DownloadEngine::progress, this, [this](const QString& id) { refreshRow(id); });
  connect(engine, &DownloadEngine::errorOccurred, this, [this](const QString& id) { refreshRow(id); });
  connect(engine, &DownloadEngine::retrying, this, [this](const QString& id) { refreshRow(id); });
  connect(engine, &DownloadEngine::finished, this, [this](const QString& id) { refreshRow(id); });
}

int DownloadListModel::rowOf(const QString& id) const {
  for (int i = 0; i < m_rows.size(); ++i) {
    if (m_rows[i].id == id) return i;
  }
  return -1;
}

void DownloadListModel::refreshRow(const QString& id) {
  const int r = rowOf(id);
  const auto info = m_engine->info(id);
  if (r < 0 || !info) return;
  m_rows[r] = *info;
  emit dataChanged(index(r), index(r));
}

int DownloadListModel::activeCount() const {
  int n = 0;
  for (const DownloadInfo& i : m_rows) n += i.state == DownloadState::queued || i.state == DownloadState::running;
  return n;
}

int DownloadListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant DownloadListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_rows.size()) return {};
  const DownloadInfo& i = m_rows[index.row()];
  switch (role) {
    case IdRole: return i.id;
    case UrlRole: return i.url;
    case PathRole: return i.path;
    case Qt::DisplayRole:
    case FileNameRole: return i.fileName;
    case StateRole: return QString::fromLatin1(stateName(i.state));
    case ReceivedRole: return double(i.receivedBytes);
    case TotalRole: return double(i.totalBytes);
    case FractionRole: return i.totalBytes > 0 ? double(i.receivedBytes) / double(i.totalBytes) : -1.0;
    case SpeedRole: return i.bytesPerSecond;
    case EtaRole: return double(i.etaSeconds);
    case AttemptRole: return i.attempt;
    case ErrorKindRole: return i.error == ErrorKind::none ? QString() : QString::fromLatin1(errorKindName(i.error));
    case ErrorMessageRole: return i.errorMessage;
    case Sha256Role: return i.sha256;
    case VerifiedRole: return i.verified;
    default: return {};
  }
}

QHash<int, QByteArray> DownloadListModel::roleNames() const {
  return {{IdRole, "downloadId"},     {UrlRole, "url"},         {PathRole, "path"},
          {FileNameRole, "fileName"}, {StateRole, "state"},     {ReceivedRole, "received"},
          {TotalRole, "total"},       {FractionRole, "fraction"}, {SpeedRole, "speed"},
          {EtaRole, "eta"},           {AttemptRole, "attempt"}, {ErrorKindRole, "errorKind"},
          {ErrorMessageRole, "errorMessage"}, {Sha256Role, "sha256"}, {VerifiedRole, "verified"}};
}

}  // namespace alap::download
