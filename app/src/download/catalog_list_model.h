// CatalogListModel: the embedded catalog as a list model for the Models page, with the "fits on
// this machine" verdict at a chosen context and cache mode. QtCore only: the app registers it for
// QML. Not a downloader: the view asks HfClient for the file's SHA-256 and DownloadEngine for it.
#pragma once

#include <QAbstractListModel>

#include "download/catalog.h"

namespace alap::download {

class CatalogListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ count CONSTANT)
  Q_PROPERTY(QString error READ error CONSTANT)  // non-empty when the catalog did not load
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY contextLengthChanged)
  Q_PROPERTY(QString cacheMode READ cacheMode WRITE setCacheMode NOTIFY cacheModeChanged)  // f16, k8, k8v8
  Q_PROPERTY(double totalMemory READ totalMemory CONSTANT)
  Q_PROPERTY(double availableMemory READ availableMemory NOTIFY memoryChanged)

 public:
  enum Role {
    IdRole = Qt::UserRole + 1, NameRole, RepositoryRole, FileRole, SizeRole, QuantizationRole, ArchitectureRole,
    ParametersRole, LicenseRole, LanguagesRole, MultilingualRole, BengaliRole, DescriptionRole, ContextLengthRole,
    KvBytesRole,   // at contextLength in cacheMode
    NeedBytesRole, // file + KV + allowance
    FitRole,       // "fits", "tight", "too_large", "unknown"
  };

  explicit CatalogListModel(QObject* parent = nullptr);  // loads the embedded catalog
  CatalogListModel(const QList<CatalogEntry>& entries, const SystemMemory& mem, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  int count() const { return int(m_entries.size()); }
  QString error() const { return m_error; }
  int contextLength() const { return m_ctx; }
  void setContextLength(int ctx);
  QString cacheMode() const { return m_mode; }
  void setCacheMode(const QString& mode);
  // The interface language ("en", "bn"): picks the description shown.
  void setLanguage(const QString& language);
  double totalMemory() const { return double(m_mem.totalBytes); }
  double availableMemory() const { return double(m_mem.availableBytes); }
  Q_INVOKABLE void refreshMemory();  // re-reads free memory
  const CatalogEntry* entry(int row) const { return row >= 0 && row < m_entries.size() ? &m_entries[row] : nullptr; }

 signals:
  void contextLengthChanged();
  void cacheModeChanged();
  void memoryChanged();

 private:
  int modeIndex() const;
  QList<CatalogEntry> m_entries;
  QString m_error;
  SystemMemory m_mem;
  int m_ctx = 4096;
  QString m_mode = QStringLiteral("k8");
  bool m_bengali = false;
};

}  // namespace alap::download
