// MemoryMeter: per-mode figures from memory_plan's kv_cache_bytes; the plot keeps at most
// kMaxPlotPoints points per line by halving its resolution when full.
#include "controllers/memory_meter.h"

#include <QCoreApplication>
#include <algorithm>

#include "core/runtime/memory_plan.h"

namespace alap::app {

MemoryMeter::MemoryMeter(const QLocale& locale, QObject* parent) : QObject(parent), m_locale(locale) {}

void MemoryMeter::setLocale(const QLocale& locale) {
  m_locale = locale;
  emit changed();
  emit contextChanged();
  emit plotChanged();
}

void MemoryMeter::setModel(const alap::ModelInfo& info) {
  m_info = info;
  m_hasModel = true;
  m_mode = QString::fromLatin1(alap::cache_mode_name(info.cache_mode));
  m_report = {};
  m_report.weights_bytes = info.weights_bytes;
  resetPlot();
  m_contextTokens = qint64(info.n_ctx);
  m_contextUsed = 0;
  emit changed();
  emit contextChanged();
}

void MemoryMeter::clearModel() {
  m_hasModel = false;
  m_info = {};
  m_report = {};
  m_mode.clear();
  resetPlot();
  m_contextUsed = m_contextTokens = 0;
  emit changed();
  emit contextChanged();
}

void MemoryMeter::setReport(const alap::MemoryReport& report) {
  m_report = report;
  emit changed();
}

void MemoryMeter::addSamples(const QList<MemorySample>& samples) {
  if (samples.isEmpty()) return;
  for (const MemorySample& s : samples) {
    m_fp16Points.append(QPointF(double(s.generated), double(s.kvFp16Bytes)));
    m_modePoints.append(QPointF(double(s.generated), double(s.kvBytes)));
  }
  while (m_fp16Points.size() > kMaxPlotPoints) {
    QList<QPointF> a, b;
    for (qsizetype i = 0; i < m_fp16Points.size(); i += 2) {
      a.append(m_fp16Points[i]);
      b.append(m_modePoints[i]);
    }
    if (a.last() != m_fp16Points.last()) {
      a.append(m_fp16Points.last());
      b.append(m_modePoints.last());
    }
    m_fp16Points = a;
    m_modePoints = b;
  }
  emit plotChanged();
}

void MemoryMeter::resetPlot() {
  m_fp16Points.clear();
  m_modePoints.clear();
  emit plotChanged();
}

void MemoryMeter::setContextUse(qint64 usedTokens, qint64 contextTokens) {
  m_contextUsed = usedTokens;
  if (contextTokens > 0) m_contextTokens = contextTokens;
  emit contextChanged();
}

double MemoryMeter::kvFraction() const {
  return m_report.kv_fp16_bytes == 0 ? 0.0 : double(m_report.kv_bytes) / double(m_report.kv_fp16_bytes);
}

QString MemoryMeter::savingText() const {
  if (m_report.kv_fp16_bytes == 0 || m_report.kv_bytes >= m_report.kv_fp16_bytes) return {};
  const double saved = 100.0 * (1.0 - kvFraction());
  return QCoreApplication::translate("MemoryMeter", "%1 saves %2% against f16")
      .arg(m_mode, m_locale.toString(saved, 'f', 0));
}

QString MemoryMeter::freeLabel() const {
  if (m_info.gpu_layers > 0) return QCoreApplication::translate("MemoryMeter", "Free GPU memory");
  return QCoreApplication::translate("MemoryMeter", "Free system memory");
}

QString MemoryMeter::backendText() const {
  if (!m_hasModel) return {};
  if (m_info.gpu_layers > 0) {
    //: where the model runs: GPU name, layers on the GPU, all layers
    return QCoreApplication::translate("MemoryMeter", "GPU %1 · %2 of %3 layers")
        .arg(QString::fromStdString(m_info.backend), m_locale.toString(m_info.gpu_layers), m_locale.toString(m_info.n_layer));
  }
  const QString threads = m_locale.toString(qulonglong(m_info.n_threads));
  if (!m_info.cpu_kernels.empty()) {
    //: where the model runs: on the processor, with this many threads, and the processor's vector
    //: instructions the engine uses (%2 = "AVX2", "AVX-512 VNNI + AMX", ...: names, not translated)
    return QCoreApplication::translate("MemoryMeter", "CPU · %1 threads · %2")
        .arg(threads, QString::fromStdString(m_info.cpu_kernels));
  }
  //: where the model runs: on the processor, with this many threads
  return QCoreApplication::translate("MemoryMeter", "CPU · %1 threads").arg(threads);
}

QString MemoryMeter::backendNote() const {
  if (!m_hasModel) return {};
  using S = alap::ModelInfo::GpuStatus;
  switch (m_info.gpu_status) {
    case S::no_library:
      return QCoreApplication::translate("MemoryMeter", "This build of Alap has no GPU support: it runs on the CPU.");
    case S::load_failed:
      return QCoreApplication::translate(
          "MemoryMeter", "The GPU library could not be loaded (AMD Radeon RX 7000 cards need ROCm 6): running on the CPU.");
    case S::other_version:
      return QCoreApplication::translate("MemoryMeter",
                                         "The GPU library belongs to another version of Alap (reinstall Alap to use "
                                         "the GPU): running on the CPU.");
    case S::no_device:
      return QCoreApplication::translate("MemoryMeter", "No usable GPU was found: running on the CPU.");
    case S::unsupported_model:
      return QCoreApplication::translate("MemoryMeter", "This model cannot run on the GPU: running on the CPU.");
    case S::no_memory:
      return QCoreApplication::translate(
          "MemoryMeter", "The GPU has too little free memory for this model and context: running on the CPU.");
    case S::used:
      return blasNote();
    case S::not_requested:
      break;
  }
  return {};
}

QString MemoryMeter::blasNote() const {
  // The library names its BLAS whenever it has one; "BLAS" only for one that would not.
  const QString blas =
      m_info.gpu_blas_name.empty() ? QStringLiteral("BLAS") : QString::fromStdString(m_info.gpu_blas_name);
  switch (m_info.gpu_blas) {
    case alap::GpuBlasUse::not_found:
      //: %1 = cuBLAS or rocBLAS
      return QCoreApplication::translate("MemoryMeter",
                                         "%1 was not found: long prompts run on Alap's own GPU kernels, more slowly. "
                                         "Installing %1 (with the CUDA toolkit or ROCm) makes them faster.")
          .arg(blas);
    case alap::GpuBlasUse::unusable:
      //: %1 = cuBLAS or rocBLAS
      return QCoreApplication::translate("MemoryMeter",
                                         "%1 failed Alap's check on this GPU: long prompts run on Alap's own GPU "
                                         "kernels, more slowly.")
          .arg(blas);
    case alap::GpuBlasUse::no_memory:
      //: %1 = cuBLAS or rocBLAS
      return QCoreApplication::translate("MemoryMeter",
                                         "No GPU memory is left for %1's workspace beside this model: long prompts "
                                         "run on Alap's own GPU kernels, more slowly.")
          .arg(blas);
    case alap::GpuBlasUse::not_built:
      return QCoreApplication::translate("MemoryMeter",
                                         "This GPU library has no vendor BLAS: long prompts run on Alap's own GPU "
                                         "kernels, more slowly.");
    case alap::GpuBlasUse::off:  // a developer's setting (ALAP_GPU_PREFILL)
    case alap::GpuBlasUse::short_batches:  // layers left to the CPU: the layer count says it already
    case alap::GpuBlasUse::used:
    case alap::GpuBlasUse::none:
      break;
  }
  return {};
}

double MemoryMeter::bytesPerToken(alap::CacheMode mode) const {
  if (!m_hasModel) return 0.0;
  const alap::KvShape shape{m_info.n_layer, m_info.n_head_kv, m_info.head_dim, m_info.head_dim};
  if (!alap::packed_mode_supported(shape, mode, nullptr)) return 0.0;
  try {
    constexpr uint64_t n = 1024;
    return double(alap::kv_cache_bytes(shape, mode, n).total) / double(n);
  } catch (const std::exception&) {
    return 0.0;
  }
}

QVariantList MemoryMeter::modeCapacity() const {
  QVariantList out;
  if (!m_hasModel) return out;
  for (alap::CacheMode mode : {alap::CacheMode::f16, alap::CacheMode::k8, alap::CacheMode::k8v8}) {
    const double perToken = bytesPerToken(mode);
    const QString name = QString::fromLatin1(alap::cache_mode_name(mode));
    QVariantMap row;
    row.insert(QStringLiteral("mode"), name);
    row.insert(QStringLiteral("current"), name == m_mode);
    if (perToken <= 0.0) {
      row.insert(QStringLiteral("tokensText"), QCoreApplication::translate("MemoryMeter", "not supported"));
    } else {
      const int tokens = int(std::min(double(m_report.device_free_bytes) / perToken, 2147483647.0));
      row.insert(QStringLiteral("tokensText"), QCoreApplication::translate("MemoryMeter", "%Ln tokens", nullptr, tokens));
    }
    out.append(row);
  }
  return out;
}

QString MemoryMeter::contextText() const {
  if (!m_hasModel) return {};
  return QCoreApplication::translate("MemoryMeter", "%1 of %2 tokens")
      .arg(m_locale.toString(m_contextUsed), m_locale.toString(m_contextTokens));
}

double MemoryMeter::contextFraction() const {
  return m_contextTokens <= 0 ? 0.0 : std::clamp(double(m_contextUsed) / double(m_contextTokens), 0.0, 1.0);
}

double MemoryMeter::plotMaxBytes() const {
  double m = 0.0;
  for (const QPointF& p : m_fp16Points) m = std::max(m, p.y());
  return m;
}

double MemoryMeter::plotMaxTokens() const { return m_fp16Points.isEmpty() ? 0.0 : m_fp16Points.last().x(); }

QVariantList MemoryMeter::toVariant(const QList<QPointF>& points) {
  QVariantList out;
  out.reserve(points.size());
  for (const QPointF& p : points) out.append(p);
  return out;
}

QString MemoryMeter::bytes(quint64 value) const {
  return m_locale.formattedDataSize(qint64(value), 1, QLocale::DataSizeIecFormat);
}

}  // namespace alap::app
