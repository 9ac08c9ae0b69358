// ModelFileListModel: folder scan off the GUI thread, newest scan wins.
#include "models/model_file_list_model.h"

#include <QDir>
#include <QLocale>
#include <QPointer>
#include <QThreadPool>

namespace alap::app {

ModelFileListModel::ModelFileListModel(QObject* parent) : QAbstractListModel(parent) {}

int ModelFileListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : count(); }

QVariant ModelFileListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const ModelFile& f = m_rows[index.row()];
  switch (role) {
    case Qt::DisplayRole:
    case NameRole: return f.name;
    case PathRole: return f.path;
    case SizeRole: return QLocale().formattedDataSize(f.bytes, 1);
    default: return {};
  }
}

QHash<int, QByteArray> ModelFileListModel::roleNames() const {
  return {{NameRole, "name"}, {PathRole, "path"}, {SizeRole, "size"}};
}

void ModelFileListModel::setFolder(const QString& folder) {
  if (folder == m_folder) return;
  m_folder = folder;
  emit folderChanged();
  refresh();
}

void ModelFileListModel::refresh() {
  const quint64 generation = ++m_generation;
  const QString folder = m_folder;
  m_scanning = true;
  emit scanningChanged();
  QPointer<ModelFileListModel> self(this);
  QThreadPool::globalInstance()->start([self, folder, generation] {
    QList<ModelFile> files = scan(folder);
    if (!self) return;
    QMetaObject::invokeMethod(self.data(), [self, files = std::move(files), generation]() mutable {
      if (!self || generation != self->m_generation) return;
      self->beginResetModel();
      self->m_rows = std::move(files);
      self->endResetModel();
      self->m_scanning = false;
      emit self->countChanged();
      emit self->scanningChanged();
      emit self->scanned();
    }, Qt::QueuedConnection);
  });
}

QString ModelFileListModel::pathAt(int row) const { return row >= 0 && row < count() ? m_rows[row].path : QString(); }

QList<ModelFile> ModelFileListModel::scan(const QString& folder) {
  QList<ModelFile> out;
  if (folder.isEmpty()) return out;
  const QDir dir(folder);
  const QFileInfoList infos =
      dir.entryInfoList({QStringLiteral("*.gguf"), QStringLiteral("*.GGUF")}, QDir::Files | QDir::Readable, QDir::Name);
  for (const QFileInfo& info : infos) out.append({info.fileName(), info.absoluteFilePath(), info.size()});
  return out;
}

}  // namespace alap::app
