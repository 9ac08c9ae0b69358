// StorePersistence: DownloadPersistence over core/store's downloads table. Header-only, so
// alap_download does not depend on SQLite: the app (which links alap_core_store) gives it a
// function that runs a job on its store thread, e.g. StoreWorker::post:
//
//   StorePersistence p([worker, ctx](StorePersistence::Job job) {
//     worker->post([job](alap::store::Store& s) { job(s); }, ctx, [] {});
//   });
//   engine.setPersistence(&p);
//   // at start-up: records = StorePersistence::fromStore(store.list_downloads()); engine.restore(records);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/store/store.h"
#include "download/download_engine.h"

namespace alap::download {

class StorePersistence : public DownloadPersistence {
 public:
  using Job = std::function<void(alap::store::Store&)>;
  explicit StorePersistence(std::function<void(Job)> post) : m_post(std::move(post)) {}

  void saveDownload(const DownloadRecord& r) override {
    store::Download d = toStore(r);
    m_post([d](store::Store& s) { s.upsert_download(d); });
  }
  void removeDownload(const QString& url) override {
    const std::string u = url.toStdString();
    m_post([u](store::Store& s) {
      for (const store::Download& d : s.list_downloads()) {
        if (d.url == u) s.remove_download(d.id);
      }
    });
  }

  static store::DownloadStatus toStoreStatus(DownloadState st) {
    switch (st) {
      case DownloadState::queued: return store::DownloadStatus::queued;
      case DownloadState::running: return store::DownloadStatus::running;
      case DownloadState::paused: return store::DownloadStatus::paused;
      case DownloadState::done: return store::DownloadStatus::done;
      case DownloadState::failed: return store::DownloadStatus::failed;
    }
    return store::DownloadStatus::failed;
  }
  static DownloadState fromStoreStatus(store::DownloadStatus st) {
    switch (st) {
      case store::DownloadStatus::queued: return DownloadState::queued;
      case store::DownloadStatus::running: return DownloadState::running;
      case store::DownloadStatus::paused: return DownloadState::paused;
      case store::DownloadStatus::done: return DownloadState::done;
      case store::DownloadStatus::failed: return DownloadState::failed;
    }
    return DownloadState::failed;
  }
  static store::Download toStore(const DownloadRecord& r) {
    store::Download d;
    d.url = r.url.toStdString();
    d.path = r.path.toStdString();
    d.sha256 = r.sha256.toStdString();
    d.total_bytes = r.totalBytes;
    d.done_bytes = r.doneBytes;
    d.status = toStoreStatus(r.state);
    return d;
  }
  static QList<DownloadRecord> fromStore(const std::vector<store::Download>& rows) {
    QList<DownloadRecord> out;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {  // oldest first: the queue order
      DownloadRecord r;
      r.url = QString::fromStdString(it->url);
      r.path = QString::fromStdString(it->path);
      r.sha256 = QString::fromStdString(it->sha256);
      r.totalBytes = it->total_bytes;
      r.doneBytes = it->done_bytes;
      r.state = fromStoreStatus(it->status);
      out.push_back(r);
    }
    return out;
  }

 private:
  std::function<void(Job)> m_post;
};

}  // namespace alap::download
