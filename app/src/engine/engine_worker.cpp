// EngineWorker: runs load and generate on its thread; batches streamed text for the GUI thread.
#include "engine/engine_worker.h"

#include <QDateTime>
#include <algorithm>
#include <exception>

#include "core/engine/perplexity.h"
#include "core/model/model.h"
#include "core/text/tokenizer.h"
#include "remote/remote_engine.h"

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

void EngineWorker::requestCancelQuality(quint64 upToId) {
  raiseTo(m_cancelQualityUpTo, upToId);
  if (m_currentQuality.load() != 0 && m_currentQuality.load() <= upToId) m_cancelQuality.store(true);
}

void EngineWorker::checkQuality(quint64 id, const QString& text) {
  m_currentQuality.store(id);
  m_cancelQuality.store(id <= m_cancelQualityUpTo.load());
  if (id <= m_cancelQualityUpTo.load()) m_cancelQuality.store(true);
  QElapsedTimer total;
  total.start();
  try {
    alap::EngineInterface* current = m_engine.get();
    if (auto* routing = dynamic_cast<RoutingEngine*>(current)) current = &routing->active();
    auto* local = dynamic_cast<alap::Engine*>(current);
    if (!local || !local->is_loaded())
      throw alap::EngineError("quality check: no local model is loaded (a remote model cannot be measured here)");
    const alap::ModelInfo info = local->model_info();
    const std::string utf8 = text.toStdString();
    const std::vector<int32_t> tokens = alap::perplexity_tokens(local->tokenizer(), utf8);
    size_t n_ctx = kQualityCtx;
    if (info.n_ctx_train >= 4) n_ctx = std::min(n_ctx, size_t(info.n_ctx_train));
    n_ctx = std::min(n_ctx, tokens.size());
    if (n_ctx < 4) throw alap::EngineError("quality check: the sample text is too short for this model");
    alap::PerplexityParams params;
    params.n_ctx = n_ctx;
    params.max_chunks = kQualityMaxChunks;
    params.n_threads = info.n_threads;
    params.cancel = &m_cancelQuality;

    QualityResult result;
    result.nCtx = qint64(n_ctx);
    const alap::CacheMode modes[2] = {alap::CacheMode::k8, alap::CacheMode::k8v8};
    QElapsedTimer sinceProgress;
    sinceProgress.start();
    for (int i = 0; i < 2; ++i) {
      params.mode = modes[i];
      const alap::KvCompareResult c = alap::kv_compare(
          local->model(), local->tokenizer().vocab(), tokens, params, [&](size_t done, size_t all, double) {
            if (sinceProgress.elapsed() < kBatchIntervalMs && done < all) return;
            sinceProgress.restart();
            emit qualityProgress(id, (double(i) + double(done) / double(std::max<size_t>(all, 1))) / 2.0);
          });
      QualityModeResult& r = i == 0 ? result.k8 : result.k8v8;
      r.mode = QString::fromLatin1(alap::cache_mode_name(modes[i]));
      r.pplF16 = c.ppl_f16;
      r.ppl = c.ppl_mode;
      r.klMean = c.kl_mean;
      r.klMax = c.kl_max;
      r.top1Agreement = c.top1_agreement;
      result.nScored = qint64(c.n_scored);
    }
    result.seconds = double(total.nsecsElapsed()) / 1e9;
    m_currentQuality.store(0);
    emit qualityFinished(id, result);
  } catch (const std::exception& e) {
    const bool cancelled = m_cancelQuality.load();
    m_currentQuality.store(0);
    emit qualityFailed(id, QString::fromUtf8(e.what()), cancelled);
  }
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
