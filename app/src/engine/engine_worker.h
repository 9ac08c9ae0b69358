// EngineWorker: the object that owns the engine and lives on its own QThread. It is reached only
// through queued slots; it answers with signals. Stop and cancel are atomics any thread may set.
// Not the GUI-side face of the engine: that is EngineController, which owns the thread.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <atomic>
#include <memory>

#include "engine/engine_types.h"

namespace alap::app {

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  // Tokens reach the GUI at most this often (a batch holds everything produced in between).
  static constexpr int kBatchIntervalMs = 33;

  explicit EngineWorker(std::unique_ptr<alap::EngineInterface> engine, QObject* parent = nullptr);
  ~EngineWorker() override;

  // Thread-safe: stops every job with an id up to and including `upToId` (within one token).
  void requestStop(quint64 upToId);
  // Thread-safe: cancels every load with an id up to and including `upToId`.
  void requestCancelLoad(quint64 upToId);
  // Thread-safe: cancels every quality check with an id up to and including `upToId`.
  void requestCancelQuality(quint64 upToId);

  // Windows of the quality check: at most this long (and the model's training context), this many.
  static constexpr size_t kQualityCtx = 256;
  static constexpr size_t kQualityMaxChunks = 3;

 public slots:
  void load(quint64 loadId, const alap::app::LoadSettings& settings);
  void unload();
  void resetContext();
  void generate(const alap::app::GenerateJob& job);
  // Runs core's kv_compare (k8, then k8v8, each against f16) over `text` on the loaded local model.
  void checkQuality(quint64 id, const QString& text);

 signals:
  void loadProgress(quint64 loadId, double fraction, const QString& stage);
  void loadFinished(quint64 loadId, const alap::ModelInfo& info);
  void loadFailed(quint64 loadId, const QString& message);
  void unloaded();
  void generationStarted(quint64 id);
  void tokensReady(quint64 id, const QString& text, const QList<alap::app::MemorySample>& samples);
  void generationFinished(quint64 id, const QString& text, const alap::app::AnswerStats& stats);
  void generationFailed(quint64 id, const QString& message, const QString& partialText);
  void memoryReported(const alap::MemoryReport& report);
  void qualityProgress(quint64 id, double fraction);
  void qualityFinished(quint64 id, const alap::app::QualityResult& result);
  void qualityFailed(quint64 id, const QString& message, bool cancelled);

 private:
  void flushBatch(quint64 id);
  void reportMemory();

  std::unique_ptr<alap::EngineInterface> m_engine;
  std::atomic<quint64> m_stopUpTo{0};
  std::atomic<quint64> m_cancelLoadUpTo{0};
  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_cancelLoad{false};
  std::atomic<quint64> m_currentJob{0};
  std::atomic<quint64> m_currentLoad{0};
  std::atomic<quint64> m_cancelQualityUpTo{0};
  std::atomic<quint64> m_currentQuality{0};
  std::atomic<bool> m_cancelQuality{false};

  // Batch state of the running generation (worker thread only).
  QString m_pendingText;
  QList<MemorySample> m_pendingSamples;
  QElapsedTimer m_sinceFlush;
  qint64 m_memoryCalls = 0;
  alap::MemoryReport m_lastReport;
  bool m_haveReport = false;
  bool m_generating = false;
};

}  // namespace alap::app
