// InstalledModelListModel (installed_model_list_model.h).
#include "download/installed_model_list_model.h"

namespace alap::download {

InstalledModelListModel::InstalledModelListModel(QObject* parent) : QAbstractListModel(parent) {
  connect(&m_scanner, &ModelScanner::scanningChanged, this, &InstalledModelListModel::scanningChanged);
  connect(&m_scanner, &ModelScanner::scanFinished, this, [this](const QString& folder, const QList<InstalledModel>& rows) {
    if (folder != m_folder) return;
    const bool countChange = rows.size() != m_rows.size();
    beginResetModel();
    m_rows = rows;
    endResetModel();
    if (countChange) emit countChanged();
    emit scanned();
  });
}

void InstalledModelListModel::setFolder(const QString& folder) {
  if (folder == m_folder) return;
  m_folder = folder;
  emit folderChanged();
  refresh();
}

void InstalledModelListModel::setContextLength(int ctx) {
  if (ctx <= 0 || ctx == m_ctx) return;
  m_ctx = ctx;
  emit contextLengthChanged();
  refresh();
}

void InstalledModelListModel::setCacheMode(const QString& mode) {
  if (mode == m_mode || (mode != QLatin1String("f16") && mode != QLatin1String("k8") && mode != QLatin1String("k8v8"))) return;
  m_mode = mode;
  emit cacheModeChanged();
  if (!m_rows.isEmpty()) emit dataChanged(index(0), index(int(m_rows.size()) - 1));
}

void InstalledModelListModel::refresh() {
  if (!m_folder.isEmpty()) m_scanner.scan(m_folder, quint64(m_ctx));
}

bool InstalledModelListModel::remove(int row) {
  if (row < 0 || row >= m_rows.size()) return false;
  QString error;
  if (!ModelScanner::removeModel(m_rows[row].path, &error)) {
    emit removeFailed(error);
    return false;
  }
  beginRemoveRows({}, row, row);
  m_rows.removeAt(row);
  endRemoveRows();
  emit countChanged();
  refresh();
  return true;
}

int InstalledModelListModel::modeIndex() const {
  if (m_mode == QLatin1String("f16")) return 0;
  if (m_mode == QLatin1String("k8v8")) return 2;
  return 1;
}

int InstalledModelListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant InstalledModelListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_rows.size()) return {};
  const InstalledModel& m = m_rows[index.row()];
  switch (role) {
    case PathRole: return m.path;
    case Qt::DisplayRole:
    case FileNameRole: return m.fileName;
    case FileSizeRole: return double(m.fileSize);
    case ValidRole: return m.valid;
    case SupportedRole: return m.supported;
    case ErrorRole: return m.error;
    case ArchitectureRole: return m.architecture;
    case NameRole: return m.name;
    case ParamsRole: return double(m.nParams);
    case QuantizationRole: return m.quantization;
    case TrainedContextRole: return double(m.contextLength);
    case KvBytesRole: return double(m.kvBytes[modeIndex()]);
    case NeedBytesRole: return double(m.needBytes[modeIndex()]);
    case FitRole: return QString::fromLatin1(fitName(m.fit[modeIndex()]));
    case KvF16Role: return double(m.kvBytes[0]);
    case KvK8Role: return double(m.kvBytes[1]);
    case KvK8V8Role: return double(m.kvBytes[2]);
    default: return {};
  }
}

QHash<int, QByteArray> InstalledModelListModel::roleNames() const {
  return {{PathRole, "path"}, {FileNameRole, "fileName"}, {FileSizeRole, "fileSize"}, {ValidRole, "valid"},
          {SupportedRole, "supported"}, {ErrorRole, "error"}, {ArchitectureRole, "architecture"}, {NameRole, "name"},
          {ParamsRole, "params"}, {QuantizationRole, "quantization"}, {TrainedContextRole, "trainedContext"},
          {KvBytesRole, "kvBytes"}, {NeedBytesRole, "needBytes"}, {FitRole, "fit"}, {KvF16Role, "kvF16"},
          {KvK8Role, "kvK8"}, {KvK8V8Role, "kvK8v8"}};
}

}  // namespace alap::download
