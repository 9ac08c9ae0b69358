// InstalledModelListModel: the models folder as scanned by ModelScanner (pool thread), one row per
// *.gguf with its figures at a chosen context and cache mode, invalid files with their reason.
// QtCore only: the app registers it for QML and adds "reveal in folder" (QDesktopServices, QtGui).
#pragma once

#include <QAbstractListModel>

#include "download/model_scanner.h"

namespace alap::download {

class InstalledModelListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(QString folder READ folder WRITE setFolder NOTIFY folderChanged)
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY contextLengthChanged)
  Q_PROPERTY(QString cacheMode READ cacheMode WRITE setCacheMode NOTIFY cacheModeChanged)  // f16, k8, k8v8
  Q_PROPERTY(bool scanning READ scanning NOTIFY scanningChanged)
  Q_PROPERTY(int count READ count NOTIFY countChanged)

 public:
  enum Role {
    PathRole = Qt::UserRole + 1, FileNameRole, FileSizeRole, ValidRole, SupportedRole, ErrorRole, ArchitectureRole,
    NameRole, ParamsRole, QuantizationRole, TrainedContextRole,
    KvBytesRole,    // at contextLength in cacheMode (0 when not computable)
    NeedBytesRole,
    FitRole,        // "fits", "tight", "too_large", "unknown"
    KvF16Role, KvK8Role, KvK8V8Role,  // all three modes at once
  };

  explicit InstalledModelListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  QString folder() const { return m_folder; }
  void setFolder(const QString& folder);
  int contextLength() const { return m_ctx; }
  void setContextLength(int ctx);  // rescans (the KV figures depend on it)
  QString cacheMode() const { return m_mode; }
  void setCacheMode(const QString& mode);
  bool scanning() const { return m_scanner.isScanning(); }
  int count() const { return int(m_rows.size()); }

  Q_INVOKABLE void refresh();
  // Moves the file to the trash (or deletes it) and rescans; false with removeFailed(message).
  Q_INVOKABLE bool remove(int row);

 signals:
  void folderChanged();
  void contextLengthChanged();
  void cacheModeChanged();
  void scanningChanged();
  void countChanged();
  void scanned();
  void removeFailed(const QString& message);

 private:
  int modeIndex() const;
  ModelScanner m_scanner;
  QList<InstalledModel> m_rows;
  QString m_folder;
  int m_ctx = 4096;
  QString m_mode = QStringLiteral("k8");
};

}  // namespace alap::download
