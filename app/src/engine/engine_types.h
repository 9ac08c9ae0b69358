// Value types that cross the thread boundary between EngineWorker and the GUI: load settings, a
// generation job, token batches with their memory samples, and the finished answer's stats.
// Plain copyable structs carried by queued signals; no logic here.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include "core/engine/engine.h"

namespace alap::app {

struct LoadSettings {
  QString path;
  alap::LoadParams params;
};

struct GenerateJob {
  quint64 id = 0;
  alap::GenerateRequest request;
};

// One point of the live cache plot: bytes after `generated` tokens of the current answer.
struct MemorySample {
  qint64 generated = 0;
  quint64 kvFp16Bytes = 0;
  quint64 kvBytes = 0;
};

struct AnswerStats {
  qint64 promptTokens = 0;
  qint64 generatedTokens = 0;
  double tokensPerSecond = 0.0;
  double timeToFirstTokenMs = 0.0;
  double totalMs = 0.0;
  QString cacheMode;   // f16, k8, k8v8
  QString stopReason;  // eog, stop_string, max_tokens, cancelled, context_full
  QString message;     // a human line for context_full
};

// "Check quality on this model": core's kv_compare of k8 and of k8v8 against f16 over one sample
// text (the windows and figures of perplexity.h). Only local models; the GUI side recommends.
struct QualityModeResult {
  QString mode;        // k8, k8v8
  double pplF16 = 0.0;
  double ppl = 0.0;    // perplexity with this mode's cache
  double klMean = 0.0; // nats, mean over scored positions of KL(p_f16 || p_mode)
  double klMax = 0.0;
  double top1Agreement = 0.0;
};

struct QualityResult {
  QualityModeResult k8;
  QualityModeResult k8v8;
  qint64 nCtx = 0;      // window length used
  qint64 nScored = 0;   // scored positions per mode
  double seconds = 0.0;
};

}  // namespace alap::app

Q_DECLARE_METATYPE(alap::app::QualityResult)
Q_DECLARE_METATYPE(alap::app::LoadSettings)
Q_DECLARE_METATYPE(alap::app::GenerateJob)
Q_DECLARE_METATYPE(alap::app::MemorySample)
Q_DECLARE_METATYPE(alap::app::AnswerStats)
Q_DECLARE_METATYPE(alap::MemoryReport)
Q_DECLARE_METATYPE(alap::ModelInfo)
