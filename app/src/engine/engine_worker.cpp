// EngineWorker: runs load and generate on its thread; batches streamed text for the GUI thread.
#include "engine/engine_worker.h"

#include <QDateTime>
#include <exception>

namespace alap::app {

namespace {

QString fromUtf8(std::string_view text) { return QString::fromUtf8(text.data(), qsizetype(text.size())); }

void raiseTo(std::atomic<quint64>& value, quint64 target) {
  quint64 current = value.load();
  while (current < target && !value.compare_exchange_weak(current, target)) {
  }
}

}  // namespace

EngineWorker::EngineWorker(std::unique_ptr<alap::EngineInterface> engine, QObject* parent)
    : QObject(parent), m_engine(std::move(engine)) {
  m_engine->set_memory_callback([this](const alap::MemoryReport& report) {
    // Called on this thread, after prefill and after every decoded token.
    m_lastReport = report;
    m_haveReport = true;
    if (!m_generating) return;
    m_pendingSamples.append(MemorySample{qMax<qint64>(0, m_memoryCalls), report.kv_fp16_bytes, report.kv_bytes});
    ++m_memoryCalls;
  });
}

EngineWorker::~EngineWorker() { m_engine->set_memory_callback({}); }

void EngineWorker::requestStop(quint64 upToId) {
  raiseTo(m_stopUpTo, upToId);
  if (m_currentJob.load() != 0 && m_currentJob.load() <= upToId) m_cancel.store(true);
}

void EngineWorker::requestCancelLoad(quint64 upToId) {
  raiseTo(m_cancelLoadUpTo, upToId);
  if (m_currentLoad.load() != 0 && m_currentLoad.load() <= upToId) m_cancelLoad.store(true);
}

void EngineWorker::load(quint64 loadId, const LoadSettings& settings) {
  m_currentLoad.store(loadId);
  m_cancelLoad.store(loadId <= m_cancelLoadUpTo.load());
  if (loadId <= m_cancelLoadUpTo.load()) m_cancelLoad.store(true);
  QElapsedTimer sinceProgress;
  sinceProgress.start();
  try {
    m_engine->load(settings.path.toStdString(), settings.params,
                   [&](float fraction, std::string_view stage) {
                     if (sinceProgress.elapsed() < kBatchIntervalMs && fraction < 1.0f) return;
                     sinceProgress.restart();
                     emit loadProgress(loadId, double(fraction), fromUtf8(stage));
                   },
                   &m_cancelLoad);
    m_currentLoad.store(0);
    emit loadFinished(loadId, m_engine->model_info());
    reportMemory();
  } catch (const std::exception& e) {
    m_currentLoad.store(0);
    emit loadFailed(loadId, QString::fromUtf8(e.what()));
  }
}

void EngineWorker::unload() {
  m_engine->unload();
  m_haveReport = false;
  emit unloaded();
}

void EngineWorker::resetContext() {
  if (m_engine->is_loaded()) m_engine->reset_context();
}

void EngineWorker::generate(const GenerateJob& job) {
  m_currentJob.store(job.id);
  m_cancel.store(job.id <= m_stopUpTo.load());
  if (job.id <= m_stopUpTo.load()) m_cancel.store(true);  // a stop that raced the line above
  m_pendingText.clear();
  m_pendingSamples.clear();
  m_memoryCalls = -1;  // the first callback comes after prefill: sample 0
  m_generating = true;
  m_sinceFlush.start();
  emit generationStarted(job.id);

  QString streamed;
  QElapsedTimer total;
  total.start();
  try {
    const alap::GenerateResult result = m_engine->generate(
        job.request,
        [&](std::string_view text) {
          const QString chunk = fromUtf8(text);
          m_pendingText += chunk;
          streamed += chunk;
          if (m_sinceFlush.elapsed() >= kBatchIntervalMs) flushBatch(job.id);
        },
        m_cancel);
    m_generating = false;
    flushBatch(job.id);
    AnswerStats stats;
    stats.promptTokens = qint64(result.stats.n_prompt_tokens);
    stats.generatedTokens = qint64(result.stats.n_generated);
    stats.tokensPerSecond = result.stats.decode_tps;
    stats.timeToFirstTokenMs = result.stats.ttft_ms;
    stats.totalMs = double(total.nsecsElapsed()) / 1e6;
    stats.stopReason = QString::fromLatin1(alap::stop_reason_name(result.stats.stop_reason));
    stats.message = QString::fromStdString(result.stats.message);
    if (m_engine->is_loaded()) stats.cacheMode = QString::fromLatin1(alap::cache_mode_name(m_engine->model_info().cache_mode));
    m_currentJob.store(0);
    emit generationFinished(job.id, fromUtf8(result.text), stats);
  } catch (const std::exception& e) {
    m_generating = false;
    flushBatch(job.id);
    m_currentJob.store(0);
    emit generationFailed(job.id, QString::fromUtf8(e.what()), streamed);
  }
  reportMemory();
}

void EngineWorker::flushBatch(quint64 id) {
  if (m_pendingText.isEmpty() && m_pendingSamples.isEmpty()) return;
  emit tokensReady(id, m_pendingText, m_pendingSamples);
  if (m_haveReport) emit memoryReported(m_lastReport);
  m_pendingText.clear();
  m_pendingSamples.clear();
  m_sinceFlush.restart();
}

void EngineWorker::reportMemory() {
  if (!m_engine->is_loaded()) return;
  try {
    m_lastReport = m_engine->memory_report();
    m_haveReport = true;
    emit memoryReported(m_lastReport);
  } catch (const std::exception&) {
    // The report is informative only; a failure here must not end the session.
  }
}

}  // namespace alap::app
