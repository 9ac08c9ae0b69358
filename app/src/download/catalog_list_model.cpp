// CatalogListModel (catalog_list_model.h).
#include "download/catalog_list_model.h"

namespace alap::download {

CatalogListModel::CatalogListModel(QObject* parent) : QAbstractListModel(parent), m_mem(systemMemory()) {
  auto c = loadCatalog();
  if (c.ok()) m_entries = *c.value;
  else m_error = c.error;
}

CatalogListModel::CatalogListModel(const QList<CatalogEntry>& entries, const SystemMemory& mem, QObject* parent)
    : QAbstractListModel(parent), m_entries(entries), m_mem(mem) {}

int CatalogListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_entries.size()); }

int CatalogListModel::modeIndex() const {
  if (m_mode == QLatin1String("f16")) return 0;
  if (m_mode == QLatin1String("k8v8")) return 2;
  return 1;
}

void CatalogListModel::setContextLength(int ctx) {
  if (ctx <= 0 || ctx == m_ctx) return;
  m_ctx = ctx;
  emit contextLengthChanged();
  if (!m_entries.isEmpty()) emit dataChanged(index(0), index(int(m_entries.size()) - 1));
}

void CatalogListModel::setCacheMode(const QString& mode) {
  if (mode == m_mode || (mode != QLatin1String("f16") && mode != QLatin1String("k8") && mode != QLatin1String("k8v8"))) return;
  m_mode = mode;
  emit cacheModeChanged();
  if (!m_entries.isEmpty()) emit dataChanged(index(0), index(int(m_entries.size()) - 1));
}

void CatalogListModel::setLanguage(const QString& language) {
  const bool bengali = language == QLatin1String("bn");
  if (bengali == m_bengali) return;
  m_bengali = bengali;
  if (!m_entries.isEmpty()) emit dataChanged(index(0), index(int(m_entries.size()) - 1), {DescriptionRole});
}

void CatalogListModel::refreshMemory() {
  m_mem = systemMemory();
  emit memoryChanged();
  if (!m_entries.isEmpty()) emit dataChanged(index(0), index(int(m_entries.size()) - 1));
}

QVariant CatalogListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_entries.size()) return {};
  const CatalogEntry& e = m_entries[index.row()];
  switch (role) {
    case IdRole: return e.id;
    case Qt::DisplayRole:
    case NameRole: return e.name;
    case RepositoryRole: return e.repository;
    case FileRole: return e.file;
    case SizeRole: return double(e.sizeBytes);
    case QuantizationRole: return e.quantization;
    case ArchitectureRole: return e.architecture;
    case ParametersRole: return e.parameters;
    case LicenseRole: return e.license;
    case LanguagesRole: return e.languages;
    case MultilingualRole: return e.multilingual;
    case BengaliRole: return e.bengali;
    case DescriptionRole: return m_bengali && !e.descriptionBn.isEmpty() ? e.descriptionBn : e.description;
    case ContextLengthRole: return double(e.contextLength);
    case KvBytesRole:
    case NeedBytesRole:
    case FitRole: {
      const CatalogFit f = catalogFit(e, uint64_t(m_ctx), m_mem);
      const int m = modeIndex();
      if (role == KvBytesRole) return double(f.kvBytes[m]);
      if (role == NeedBytesRole) return double(f.needBytes[m]);
      return QString::fromLatin1(fitName(f.fit[m]));
    }
    default: return {};
  }
}

QHash<int, QByteArray> CatalogListModel::roleNames() const {
  return {{IdRole, "modelId"}, {NameRole, "name"}, {RepositoryRole, "repository"}, {FileRole, "file"},
          {SizeRole, "size"}, {QuantizationRole, "quantization"}, {ArchitectureRole, "architecture"},
          {ParametersRole, "parameters"}, {LicenseRole, "license"}, {LanguagesRole, "languages"},
          {MultilingualRole, "multilingual"}, {BengaliRole, "bengali"}, {DescriptionRole, "description"},
          {ContextLengthRole, "contextLength"}, {KvBytesRole, "kvBytes"}, {NeedBytesRole, "needBytes"}, {FitRole, "fit"}};
}

}  // namespace alap::download
