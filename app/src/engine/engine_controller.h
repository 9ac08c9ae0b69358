// EngineController: the GUI thread's face of the engine. Owns the worker thread and its
// EngineWorker, turns QML intents (load, cancel, stop) into queued calls and worker signals into
// properties. Never waits for the engine. Not the chat logic: ChatController drives generation.
#pragma once

#include <QObject>
#include <QPointer>
#include <QThread>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include "engine/engine_types.h"

namespace alap::app {

class AppSettings;
class EngineWorker;

class EngineController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("EngineController is created by the application")

  Q_PROPERTY(Status status READ status NOTIFY statusChanged)
  Q_PROPERTY(bool modelLoaded READ modelLoaded NOTIFY statusChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY statusChanged)
  Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
  Q_PROPERTY(QString loadStage READ loadStage NOTIFY loadProgressChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
  Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
  Q_PROPERTY(QString modelSummary READ modelSummary NOTIFY modelChanged)
  Q_PROPERTY(QString cacheMode READ cacheMode NOTIFY modelChanged)
  Q_PROPERTY(QString errorText READ errorText NOTIFY errorTextChanged)
  // A quality check is queued or running on the engine thread (a generation requested now waits).
  Q_PROPERTY(bool checkingQuality READ checkingQuality NOTIFY checkingQualityChanged)

 public:
  enum Status { NoModel, Loading, Ready, Generating };
  Q_ENUM(Status)

  EngineController(std::unique_ptr<alap::EngineInterface> engine, AppSettings* settings, QObject* parent = nullptr);
  ~EngineController() override;

  Status status() const { return m_status; }
  bool modelLoaded() const { return m_status == Ready || m_status == Generating; }
  bool busy() const { return m_status == Loading || m_status == Generating; }
  double loadProgress() const { return m_loadProgress; }
  QString loadStage() const { return m_loadStage; }
  QString modelName() const;
  QString modelPath() const;
  QString modelSummary() const;
  QString cacheMode() const;
  QString errorText() const { return m_errorText; }
  const alap::ModelInfo& modelInfo() const { return m_info; }

  Q_INVOKABLE void loadModel(const QString& path);
  Q_INVOKABLE void cancelLoad();
  Q_INVOKABLE void unloadModel();
  Q_INVOKABLE void clearError();

  // Queues a generation; returns its id. Results come through the signals below.
  quint64 generate(const alap::GenerateRequest& request);
  // Stops the running and every queued generation (within one token).
  Q_INVOKABLE void stop();
  void resetContext();
  // Queues core's f16-against-packed comparison (k8, k8v8) over `text` on the worker; returns its
  // id. Results come through qualityProgress/qualityFinished/qualityFailed.
  quint64 checkQuality(const QString& text);
  // Cancels the running and every queued quality check (between windows).
  void cancelQuality();
  // The loaded model is served by a remote server (nothing to measure on this machine).
  bool remoteModel() const;
  bool checkingQuality() const { return m_pendingQuality > 0; }

 signals:
  void statusChanged();
  void loadProgressChanged();
  void modelChanged();
  void errorTextChanged();
  void checkingQualityChanged();
  void tokensReady(quint64 id, const QString& text, const QList<alap::app::MemorySample>& samples);
  void generationStarted(quint64 id);
  void generationFinished(quint64 id, const QString& text, const alap::app::AnswerStats& stats);
  void generationFailed(quint64 id, const QString& message, const QString& partialText);
  void memoryReported(const alap::MemoryReport& report);
  void modelLoadedChanged(const alap::ModelInfo& info);
  void qualityProgress(quint64 id, double fraction);
  void qualityFinished(quint64 id, const alap::app::QualityResult& result);
  void qualityFailed(quint64 id, const QString& message, bool cancelled);

  // To the worker (queued).
  void loadRequested(quint64 loadId, const alap::app::LoadSettings& settings);
  void unloadRequested();
  void resetRequested();
  void generateRequested(const alap::app::GenerateJob& job);
  void qualityRequested(quint64 id, const QString& text);

 private:
  void setStatus(Status status);
  void setError(const QString& text);
  QString stageText(const QString& stage) const;

  AppSettings* m_settings;
  QThread m_thread;
  EngineWorker* m_worker = nullptr;  // lives on m_thread; deleted there when it finishes
  Status m_status = NoModel;
  Status m_statusBeforeLoad = NoModel;
  double m_loadProgress = 0.0;
  QString m_loadStage;
  QString m_errorText;
  alap::ModelInfo m_info;
  quint64 m_nextJob = 0;
  quint64 m_nextLoad = 0;
  quint64 m_nextQuality = 0;
  quint64 m_pendingJobs = 0;  // queued or running generations
  quint64 m_pendingQuality = 0;  // queued or running quality checks (each ends in finished or failed)
};

}  // namespace alap::app
