// DownloadListModel: the engine's downloads as a list model for the Downloads view (one row per
// download, updated from the engine's signals; progress at the engine's rate limit). QtCore only:
// the app registers it for QML. Not the engine (download_engine.h).
#pragma once

#include <QAbstractListModel>

#include "download/download_engine.h"

namespace alap::download {

class DownloadListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(int activeCount READ activeCount NOTIFY activeCountChanged)

 public:
  enum Role {
    IdRole = Qt::UserRole + 1,
    UrlRole,
    PathRole,
    FileNameRole,
    StateRole,         // "queued", "running", "paused", "done", "failed"
    ReceivedRole,      // bytes (double, for QML)
    TotalRole,         // bytes, -1 while unknown
    FractionRole,      // 0..1, -1 while unknown
    SpeedRole,         // bytes per second
    EtaRole,           // seconds, -1 while unknown
    AttemptRole,
    ErrorKindRole,     // "" or "not_found", "needs_token", "forbidden", "offline", "timeout",
                       // "server", "disk_full", "io", "checksum", "invalid"
    ErrorMessageRole,
    Sha256Role,
    VerifiedRole,
  };

  explicit DownloadListModel(DownloadEngine* engine, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  int count() const { return int(m_rows.size()); }
  int activeCount() const;  // queued + running

  Q_INVOKABLE void pause(const QString& id) { m_engine->pause(id); }
  Q_INVOKABLE void resume(const QString& id) { m_engine->resume(id); }
  Q_INVOKABLE void cancel(const QString& id) { m_engine->cancel(id); }
  Q_INVOKABLE void forget(const QString& id) { m_engine->forget(id); }

 signals:
  void countChanged();
  void activeCountChanged();

 private:
  int rowOf(const QString& id) const;
  void refreshRow(const QString& id);

  DownloadEngine* m_engine;
  QList<DownloadInfo> m_rows;
};

}  // namespace alap::download
