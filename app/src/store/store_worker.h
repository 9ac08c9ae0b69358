// StoreWorker: the history database on its own thread. The GUI posts a job (a function of the
// Store) with a context object and a completion; the job runs on the store thread, the completion
// on the context's thread. The GUI never waits for SQLite. Not a cache of the data: view models
// hold what they show.
//
//   worker->post([id](Store& s) { return s.list_messages(id); }, this,
//                [this](std::vector<Message> rows) { m_model.setMessages(rows); });
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include "core/store/store.h"

namespace alap::app {

class StoreWorker : public QObject {
  Q_OBJECT

 public:
  explicit StoreWorker(QObject* parent = nullptr);
  ~StoreWorker() override;

  // Opens path on the store thread. A corrupt or too new file is opened read-only instead (never
  // overwritten); `opened` reports which. Must be called before post().
  void open(const QString& path);
  // Copies the database file aside (Store::backup_copy) on the store thread.
  void backup();

  bool isOpen() const { return m_open; }
  bool isReadOnly() const { return m_readOnly; }
  QString path() const { return m_path; }

  // Runs work(Store&) on the store thread, then done(result) on context's thread (skipped when the
  // context was destroyed). A StoreError ends in `failed` with its message instead.
  template <typename Work, typename Done>
  void post(Work work, QObject* context, Done done) {
    QPointer<QObject> guard(context);
    QMetaObject::invokeMethod(m_anchor, [this, work = std::move(work), guard, done = std::move(done)]() mutable {
      if (!m_store) {
        emitFailed(tr("The history database is not open."));
        return;
      }
      try {
        if constexpr (std::is_void_v<std::invoke_result_t<Work&, alap::store::Store&>>) {
          work(*m_store);
          if (guard) QMetaObject::invokeMethod(guard.data(), [guard, done = std::move(done)]() mutable {
              if (guard) done();
            }, Qt::QueuedConnection);
        } else {
          auto result = work(*m_store);
          if (guard) QMetaObject::invokeMethod(guard.data(), [guard, done = std::move(done), result = std::move(result)]() mutable {
              if (guard) done(std::move(result));
            }, Qt::QueuedConnection);
        }
      } catch (const std::exception& e) {
        emitFailed(QString::fromUtf8(e.what()));
      }
    }, Qt::QueuedConnection);
  }
  // A job with no completion.
  template <typename Work>
  void post(Work work) {
    post(std::move(work), this, [](auto&&...) {});
  }

 signals:
  void opened(bool readOnly, const QString& message);
  void failed(const QString& message);
  void backedUp(const QString& path);

 private:
  void emitFailed(const QString& message);

  QThread m_thread;
  QObject* m_anchor;  // lives on m_thread; jobs run in its context
  std::unique_ptr<alap::store::Store> m_store;  // used on m_thread only
  QString m_path;
  bool m_open = false;
  bool m_readOnly = false;
};

}  // namespace alap::app
