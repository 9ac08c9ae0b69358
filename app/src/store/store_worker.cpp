// StoreWorker: opens the history on its thread, falls back to read-only for a damaged file.
#include "store/store_worker.h"

#include <QDir>
#include <QFileInfo>

namespace alap::app {

StoreWorker::StoreWorker(QObject* parent) : QObject(parent), m_anchor(new QObject) {
  m_thread.setObjectName(QStringLiteral("alap-store"));
  m_anchor->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_anchor, &QObject::deleteLater);
  // The Store is closed on the thread that used it, after every job posted before quit().
  connect(&m_thread, &QThread::finished, m_anchor, [this] { m_store.reset(); }, Qt::DirectConnection);
  m_thread.start();
}

StoreWorker::~StoreWorker() {
  // Shutdown only: let every queued write (a final answer, a rename) reach the disk first.
  QMetaObject::invokeMethod(m_anchor, [] {}, Qt::BlockingQueuedConnection);
  m_thread.quit();
  m_thread.wait();
}

void StoreWorker::open(const QString& path) {
  m_path = path;
  m_open = true;
  QMetaObject::invokeMethod(m_anchor, [this, path] {
    namespace st = alap::store;
    const std::filesystem::path file = path.toStdString();
    QDir().mkpath(QFileInfo(path).absolutePath());
    try {
      m_store = std::make_unique<st::Store>(st::Store::open(file));
      QMetaObject::invokeMethod(this, [this] {
        m_readOnly = false;
        emit opened(false, {});
      }, Qt::QueuedConnection);
      return;
    } catch (const st::StoreError& e) {
      const QString why = QString::fromUtf8(e.what());
      if (e.kind() != st::ErrorKind::corrupt && e.kind() != st::ErrorKind::too_new) {
        QMetaObject::invokeMethod(this, [this, why] { emit failed(why); }, Qt::QueuedConnection);
        return;
      }
      try {
        m_store = std::make_unique<st::Store>(st::Store::open_read_only(file));
      } catch (const std::exception&) {
        m_store.reset();
      }
      const bool have = m_store != nullptr;
      QMetaObject::invokeMethod(this, [this, why, have] {
        m_readOnly = true;
        emit opened(true, have ? tr("The history could not be opened for writing (%1). It is shown read-only and "
                                    "nothing will be written to it. You can make a backup copy.").arg(why)
                               : tr("The history could not be opened (%1). It was left untouched. You can make a "
                                    "backup copy.").arg(why));
      }, Qt::QueuedConnection);
    }
  }, Qt::QueuedConnection);
}

void StoreWorker::backup() {
  const QString path = m_path;
  QMetaObject::invokeMethod(m_anchor, [this, path] {
    try {
      const auto copy = alap::store::Store::backup_copy(path.toStdString());
      const QString out = QString::fromStdString(copy.string());
      QMetaObject::invokeMethod(this, [this, out] { emit backedUp(out); }, Qt::QueuedConnection);
    } catch (const std::exception& e) {
      emitFailed(QString::fromUtf8(e.what()));
    }
  }, Qt::QueuedConnection);
}

void StoreWorker::emitFailed(const QString& message) {
  QMetaObject::invokeMethod(this, [this, message] { emit failed(message); }, Qt::QueuedConnection);
}

}  // namespace alap::app
