// ModelsController: wiring of the download library for the window. Download rows are saved
// through StorePersistence on the store thread and restored (resumed from their .part) at start.
#include "controllers/models_controller.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QUrl>

#include "controllers/app_settings.h"
#include "download/catalog_list_model.h"
#include "download/download_engine.h"
#include "download/download_list_model.h"
#include "download/hf_client.h"
#include "download/hf_token.h"
#include "download/installed_model_list_model.h"
#include "download/store_persistence.h"
#include "store/store_worker.h"

namespace alap::app {

namespace dl = alap::download;

ModelsController::ModelsController(AppSettings* settings, StoreWorker* store, const Parts& parts, QObject* parent)
    : QObject(parent), m_settings(settings), m_store(store),
      m_tokenPath(parts.tokenPath.isEmpty() ? dl::defaultTokenPath() : parts.tokenPath) {
  m_engine = std::make_unique<dl::DownloadEngine>();
  m_hf = std::make_unique<dl::HfClient>();
  if (!parts.endpoint.isEmpty()) m_hf->setEndpoint(parts.endpoint);
  m_downloads = std::make_unique<dl::DownloadListModel>(m_engine.get());
  m_catalog.reset(parts.catalog ? parts.catalog : new dl::CatalogListModel());
  m_installed = std::make_unique<dl::InstalledModelListModel>();
  connect(m_downloads.get(), &dl::DownloadListModel::countChanged, this, &ModelsController::downloadCountChanged);
  connect(m_catalog.get(), &dl::CatalogListModel::memoryChanged, this, &ModelsController::memoryChanged);
  readToken();

  if (m_store) {
    StoreWorker* worker = m_store;
    m_persistence = std::make_unique<dl::StorePersistence>([worker](dl::StorePersistence::Job job) {
      worker->post([job](alap::store::Store& s) { job(s); });
    });
    m_engine->setPersistence(m_persistence.get());
    m_store->post([](alap::store::Store& s) { return s.list_downloads(); }, this,
                  [this](std::vector<alap::store::Download> rows) {
                    m_engine->restore(dl::StorePersistence::fromStore(rows));
                  });
  }

  if (m_settings) {
    auto sync = [this] {
      m_installed->setFolder(m_settings->modelsFolder());
      m_installed->setContextLength(m_settings->contextLength());
      m_installed->setCacheMode(m_settings->estimateCacheMode());
      m_catalog->setContextLength(m_settings->contextLength());
      m_catalog->setCacheMode(m_settings->estimateCacheMode());
    };
    connect(m_settings, &AppSettings::modelsFolderChanged, this, sync);
    connect(m_settings, &AppSettings::loadSettingsChanged, this, sync);
    sync();
  }

  connect(m_engine.get(), &dl::DownloadEngine::finished, this, [this] { m_installed->refresh(); });
  connect(m_engine.get(), &dl::DownloadEngine::added, this, &ModelsController::downloadQueued);
  connect(m_engine.get(), &dl::DownloadEngine::errorOccurred, this,
          [this](const QString& id, dl::ErrorKind, const QString& message) {
            if (id.isEmpty()) setNotice(tr("Could not start the download: %1").arg(message));
          });
  connect(m_installed.get(), &dl::InstalledModelListModel::removeFailed, this,
          [this](const QString& message) { setNotice(tr("Could not delete the model: %1").arg(message)); });

  connect(m_hf.get(), &dl::HfClient::searchFinished, this,
          [this](quint64 id, const QList<dl::HfModelSummary>& models) {
            if (id != m_searchId) return;
            m_searchId = 0;
            m_results.clear();
            for (const dl::HfModelSummary& m : models) {
              m_results.append(QVariantMap{{QStringLiteral("id"), m.id},
                                           {QStringLiteral("downloads"), double(m.downloads)},
                                           {QStringLiteral("likes"), double(m.likes)},
                                           {QStringLiteral("gated"), m.gated}});
            }
            emit searchChanged();
          });
  connect(m_hf.get(), &dl::HfClient::filesFinished, this,
          [this](quint64 id, const QString& repo, const QList<dl::HfFile>& files, const QList<dl::HfFileGroup>& groups) {
            if (m_pendingCatalog.contains(id)) {
              const PendingCatalog p = m_pendingCatalog.take(id);
              for (const dl::HfFile& f : files) {
                if (f.path == p.file) {
                  enqueue(repo, f);
                  return;
                }
              }
              setNotice(tr("%1 is no longer in the repository %2.").arg(p.file, repo));
              return;
            }
            if (id != m_filesId) return;
            m_filesId = 0;
            m_groups = groups;
            emit filesChanged();
          });
  connect(m_hf.get(), &dl::HfClient::requestFailed, this, [this](quint64 id, dl::ErrorKind, const QString& message) {
    if (m_pendingCatalog.remove(id) > 0) {
      setNotice(tr("Could not start the download: %1").arg(message));
    } else if (id == m_searchId) {
      m_searchId = 0;
      m_searchError = message;
      emit searchChanged();
    } else if (id == m_filesId) {
      m_filesId = 0;
      setNotice(tr("Could not list the files: %1").arg(message));
      emit filesChanged();
    }
  });
}

ModelsController::~ModelsController() {
  // The engine saves its rows on the way down: keep the persistence alive until it is gone.
  m_downloads.reset();
  m_engine.reset();
  m_persistence.reset();
}

int ModelsController::downloadCount() const { return m_downloads->count(); }
double ModelsController::totalMemory() const { return m_catalog->totalMemory(); }
double ModelsController::availableMemory() const { return m_catalog->availableMemory(); }

void ModelsController::refreshLists() {
  m_installed->refresh();
  m_catalog->refreshMemory();
}

void ModelsController::pauseDownload(const QString& id) { m_downloads->pause(id); }
void ModelsController::resumeDownload(const QString& id) { m_downloads->resume(id); }
void ModelsController::cancelDownload(const QString& id) { m_downloads->cancel(id); }
void ModelsController::forgetDownload(const QString& id) { m_downloads->forget(id); }

QAbstractListModel* ModelsController::installedModel() const { return m_installed.get(); }
QAbstractListModel* ModelsController::catalogModel() const { return m_catalog.get(); }

void ModelsController::setLanguage(const QString& language) {
  static_cast<dl::CatalogListModel*>(m_catalog.get())->setLanguage(language);
}
QAbstractListModel* ModelsController::downloadsModel() const { return m_downloads.get(); }
QString ModelsController::endpoint() const { return m_hf->endpoint(); }

QVariantList ModelsController::fileGroups() const {
  QVariantList out;
  for (const dl::HfFileGroup& g : m_groups) {
    out.append(QVariantMap{{QStringLiteral("quant"), g.quant},
                           {QStringLiteral("name"), g.name},
                           {QStringLiteral("size"), double(g.totalSize)},
                           {QStringLiteral("parts"), int(g.files.size())},
                           {QStringLiteral("complete"), g.complete},
                           {QStringLiteral("runnable"), dl::quantRunnable(g.quant)}});
  }
  return out;
}

void ModelsController::readToken() {
  const dl::TokenRead read = dl::readToken(m_tokenPath);
  m_token = read.token;
  m_tokenSource = read.source;
  m_tokenError = read.error;
  m_hf->setToken(m_token);
  m_engine->setToken(m_token, QUrl(m_hf->endpoint()).host());
  emit tokenChanged();
}

bool ModelsController::setToken(const QString& token) {
  QString error;
  if (!dl::writeToken(token.trimmed(), m_tokenPath, &error)) {
    m_tokenError = error;
    emit tokenChanged();
    return false;
  }
  readToken();
  return true;
}

QString ModelsController::targetPath(const QString& fileName) const {
  const QString folder = m_settings ? m_settings->modelsFolder() : QDir::currentPath();
  QDir().mkpath(folder);
  return QDir(folder).filePath(fileName);
}

void ModelsController::enqueue(const QString& repo, const dl::HfFile& file) {
  dl::DownloadRequest r;
  r.url = m_hf->fileUrl(repo, file.path);
  r.path = targetPath(file.fileName);
  r.sha256 = file.sha256;
  r.expectedSize = file.size > 0 ? file.size : -1;
  m_engine->enqueue(r);
}

void ModelsController::downloadCatalog(int row) {
  const dl::CatalogEntry* e = static_cast<dl::CatalogListModel*>(m_catalog.get())->entry(row);
  if (!e) return;
  const quint64 id = m_hf->listFiles(e->repository);
  m_pendingCatalog.insert(id, PendingCatalog{e->repository, e->file, e->sizeBytes});
}

void ModelsController::search(const QString& query) {
  if (query.trimmed().isEmpty()) return;
  m_searchError.clear();
  m_searchId = m_hf->search(query.trimmed());
  emit searchChanged();
}

void ModelsController::openRepository(const QString& repoId) {
  m_repoId = repoId;
  m_groups.clear();
  m_filesId = m_hf->listFiles(repoId);
  emit filesChanged();
}

void ModelsController::downloadGroup(int index) {
  if (index < 0 || index >= m_groups.size()) return;
  if (!dl::quantRunnable(m_groups[index].quant)) {  // the pane disables its button; a caller may not
    setNotice(tr("Alap cannot run %1 files yet; nothing was downloaded.").arg(m_groups[index].quant));
    return;
  }
  for (const dl::HfFile& f : m_groups[index].files) enqueue(m_repoId, f);
}

bool ModelsController::removeInstalled(int row) { return m_installed->remove(row); }

void ModelsController::revealInFolder(const QString& path) {
  QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath()));
}

void ModelsController::setNotice(const QString& text) {
  m_notice = text;
  emit noticeChanged();
}

void ModelsController::clearNotice() { setNotice(QString()); }

}  // namespace alap::app
