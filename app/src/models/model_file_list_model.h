// ModelFileListModel: the *.gguf files of the models folder (name, path, size). The folder is
// read on a pool thread; the model is refilled on the GUI thread. Not a downloader.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

namespace alap::app {

struct ModelFile {
  QString name;
  QString path;
  qint64 bytes = 0;
};

class ModelFileListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("ModelFileListModel is provided by the application")
  Q_PROPERTY(QString folder READ folder WRITE setFolder NOTIFY folderChanged)
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(bool scanning READ scanning NOTIFY scanningChanged)

 public:
  enum Role { NameRole = Qt::UserRole + 1, PathRole, SizeRole };

  explicit ModelFileListModel(QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  QString folder() const { return m_folder; }
  void setFolder(const QString& folder);
  int count() const { return int(m_rows.size()); }
  bool scanning() const { return m_scanning; }
  Q_INVOKABLE void refresh();
  Q_INVOKABLE QString pathAt(int row) const;

  // The scan itself (any thread): *.gguf files in folder, sorted by name.
  static QList<ModelFile> scan(const QString& folder);

 signals:
  void folderChanged();
  void countChanged();
  void scanningChanged();
  void scanned();

 private:
  QString m_folder;
  QList<ModelFile> m_rows;
  bool m_scanning = false;
  quint64 m_generation = 0;
};

}  // namespace alap::app
