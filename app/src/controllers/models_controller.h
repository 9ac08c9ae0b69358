// ModelsController: the Models page's state and actions over alap_download: installed models,
// the catalog, Hugging Face search, the download queue (persisted in SQLite through StoreWorker
// and restored at start) and the access token file. Owns the download engine and the list models
// and hands them to QML. Not the downloader (download_engine.h) nor the HF client (hf_client.h).
#pragma once

#include <QAbstractListModel>
#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include "download/hf_api.h"

namespace alap::download {
class CatalogListModel;
class DownloadEngine;
class DownloadListModel;
class HfClient;
class InstalledModelListModel;
class StorePersistence;
}  // namespace alap::download

namespace alap::app {

class AppSettings;
class StoreWorker;

class ModelsController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("ModelsController is created by the application")

  Q_PROPERTY(QAbstractListModel* installed READ installedModel CONSTANT)
  Q_PROPERTY(QAbstractListModel* catalog READ catalogModel CONSTANT)
  Q_PROPERTY(QAbstractListModel* downloads READ downloadsModel CONSTANT)
  Q_PROPERTY(QString endpoint READ endpoint CONSTANT)
  Q_PROPERTY(QVariantList searchResults READ searchResults NOTIFY searchChanged)
  Q_PROPERTY(bool searching READ searching NOTIFY searchChanged)
  Q_PROPERTY(QString searchError READ searchError NOTIFY searchChanged)
  Q_PROPERTY(QString repoId READ repoId NOTIFY filesChanged)
  Q_PROPERTY(QVariantList fileGroups READ fileGroups NOTIFY filesChanged)
  Q_PROPERTY(bool listingFiles READ listingFiles NOTIFY filesChanged)
  Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
  Q_PROPERTY(bool hasToken READ hasToken NOTIFY tokenChanged)
  Q_PROPERTY(QString tokenSource READ tokenSource NOTIFY tokenChanged)
  Q_PROPERTY(QString tokenError READ tokenError NOTIFY tokenChanged)
  // What the pages show of the list models, typed (QML sees the lists as QAbstractListModel).
  Q_PROPERTY(int downloadCount READ downloadCount NOTIFY downloadCountChanged)
  Q_PROPERTY(double totalMemory READ totalMemory CONSTANT)
  Q_PROPERTY(double availableMemory READ availableMemory NOTIFY memoryChanged)

 public:
  struct Parts {  // for tests: what to use instead of the defaults (all optional)
    alap::download::CatalogListModel* catalog = nullptr;  // ownership taken
    QString endpoint;   // default: $HF_ENDPOINT or huggingface.co
    QString tokenPath;  // default: hf_token.h's defaultTokenPath()
  };

  ModelsController(AppSettings* settings, StoreWorker* store, const Parts& parts, QObject* parent = nullptr);
  ModelsController(AppSettings* settings, StoreWorker* store, QObject* parent = nullptr)
      : ModelsController(settings, store, Parts{}, parent) {}
  ~ModelsController() override;

  QAbstractListModel* installedModel() const;
  QAbstractListModel* catalogModel() const;
  // The interface language ("en", "bn"): the catalog shows its descriptions in it.
  void setLanguage(const QString& language);
  QAbstractListModel* downloadsModel() const;
  alap::download::DownloadEngine* downloadEngine() const { return m_engine.get(); }
  QString endpoint() const;
  QVariantList searchResults() const { return m_results; }
  bool searching() const { return m_searchId != 0; }
  QString searchError() const { return m_searchError; }
  QString repoId() const { return m_repoId; }
  QVariantList fileGroups() const;
  bool listingFiles() const { return m_filesId != 0; }
  QString notice() const { return m_notice; }
  bool hasToken() const { return !m_token.isEmpty(); }
  QString tokenSource() const { return m_tokenSource; }
  QString tokenError() const { return m_tokenError; }
  int downloadCount() const;
  double totalMemory() const;
  double availableMemory() const;

  // Catalog row -> the repository's file list (for the LFS SHA-256) -> a download into the models folder.
  Q_INVOKABLE void downloadCatalog(int row);
  Q_INVOKABLE void search(const QString& query);
  Q_INVOKABLE void openRepository(const QString& repoId);
  Q_INVOKABLE void downloadGroup(int index);  // every file of fileGroups[index]
  Q_INVOKABLE bool removeInstalled(int row);
  Q_INVOKABLE void revealInFolder(const QString& path);  // opens the folder holding path
  Q_INVOKABLE bool setToken(const QString& token);       // writes (or deletes) the user-only file
  Q_INVOKABLE void clearNotice();
  // When the page opens: rescan the models folder and re-read the free memory.
  Q_INVOKABLE void refreshLists();
  Q_INVOKABLE void pauseDownload(const QString& id);
  Q_INVOKABLE void resumeDownload(const QString& id);
  Q_INVOKABLE void cancelDownload(const QString& id);
  Q_INVOKABLE void forgetDownload(const QString& id);

 signals:
  void searchChanged();
  void filesChanged();
  void noticeChanged();
  void tokenChanged();
  void downloadQueued(const QString& id);
  void downloadCountChanged();
  void memoryChanged();

 private:
  struct PendingCatalog {
    QString repository, file;
    qint64 size = 0;
  };
  void setNotice(const QString& text);
  void readToken();
  QString targetPath(const QString& fileName) const;
  void enqueue(const QString& repo, const alap::download::HfFile& file);

  AppSettings* m_settings;
  StoreWorker* m_store;
  QString m_tokenPath;
  std::unique_ptr<alap::download::StorePersistence> m_persistence;
  std::unique_ptr<alap::download::DownloadEngine> m_engine;
  std::unique_ptr<alap::download::HfClient> m_hf;
  std::unique_ptr<alap::download::DownloadListModel> m_downloads;
  std::unique_ptr<alap::download::CatalogListModel> m_catalog;
  std::unique_ptr<alap::download::InstalledModelListModel> m_installed;
  QHash<quint64, PendingCatalog> m_pendingCatalog;
  quint64 m_searchId = 0;
  quint64 m_filesId = 0;
  QVariantList m_results;
  QString m_searchError;
  QString m_repoId;
  QList<alap::download::HfFileGroup> m_groups;
  QString m_notice;
  QString m_token, m_tokenSource, m_tokenError;
};

}  // namespace alap::app
