// QualityCheck: queues the comparison on EngineController, formats its figures in the UI locale.
#include "controllers/quality_check.h"

#include <QFile>
#include <algorithm>
#include <cmath>

#include "controllers/app_settings.h"
#include "engine/engine_controller.h"

namespace alap::app {

QualityCheck::QualityCheck(EngineController* engine, const QLocale& locale, QObject* parent)
    : QObject(parent), m_engine(engine), m_locale(locale) {
  connect(m_engine, &EngineController::statusChanged, this, [this] {
    // The figures belong to the model they were measured on.
    if (m_engine->status() == EngineController::NoModel || m_engine->status() == EngineController::Loading) {
      cancel();
      if (m_hasResult || !m_error.isEmpty()) clearResult();
    }
    emit changed();
  });
  connect(m_engine, &EngineController::qualityProgress, this, [this](quint64 id, double fraction) {
    if (id != m_job) return;
    m_progress = fraction;
    emit progressChanged();
  });
  connect(m_engine, &EngineController::qualityFinished, this, [this](quint64 id, const QualityResult& result) {
    if (id != m_job) return;
    m_running = false;
    m_result = result;
    m_hasResult = true;
    m_progress = 1.0;
    emit progressChanged();
    emit changed();
    emit finished(result, recommend(result));
  });
  connect(m_engine, &EngineController::qualityFailed, this, [this](quint64 id, const QString& message, bool cancelled) {
    if (id != m_job) return;
    m_running = false;
    m_error = cancelled ? QString() : tr("The quality check failed: %1").arg(message);
    emit changed();
    if (!cancelled) emit failed(message);
  });
}

void QualityCheck::setSettings(AppSettings* settings) {
  m_settings = settings;
  emit changed();
}

bool QualityCheck::canUseRecommendation() const {
  if (!m_settings || !m_hasResult || m_running || m_engine->status() != EngineController::Ready) return false;
  const QString mode = recommend(m_result);
  return mode != m_engine->cacheMode();  // f16 too: the automatic mode is k8, which may cost this model
}

QString QualityCheck::appliedText() const {
  if (m_appliedMode.isEmpty()) return {};
  if (m_engine->modelLoaded() && m_engine->modelPath() != m_appliedPath) return {};  // another model now
  if (m_engine->status() == EngineController::Loading)
    return tr("The cache mode is now %1. The model is reloading with it…").arg(m_appliedMode);
  if (m_engine->modelLoaded() && m_engine->cacheMode() == m_appliedMode)
    return tr("The model was reloaded with the %1 cache.").arg(m_appliedMode);
  return tr("The cache mode is now %1; it applies to the next model load.").arg(m_appliedMode);
}

bool QualityCheck::useRecommendedMode() {
  if (!canUseRecommendation()) return false;
  const QString mode = recommend(m_result);
  const QString path = m_engine->modelPath();
  m_settings->setCacheMode(mode);
  m_appliedMode = mode;
  m_appliedPath = path;
  m_engine->loadModel(path);  // the figures belonged to the old load: they are cleared on Loading
  emit changed();
  return true;
}

bool QualityCheck::available() const {
  return m_engine->status() == EngineController::Ready && !m_engine->remoteModel();
}

QString QualityCheck::hint() const {
  if (m_running) return {};
  if (!m_engine->modelLoaded()) return tr("Load a model on this computer to check what the packed cache costs on it.");
  if (m_engine->remoteModel())
    return tr("A remote model cannot be checked: its cache is on the server, not on this computer.");
  if (m_engine->status() != EngineController::Ready) return tr("Wait for the answer to finish.");
  return tr("Compares the f16 cache with k8 and k8v8 on a short sample text (about a minute on a large model).");
}

QString QualityCheck::progressText() const {
  return m_running ? tr("Checking… %1").arg(m_locale.toString(qRound(m_progress * 100.0)) + m_locale.percent()) : QString();
}

void QualityCheck::setLocale(const QLocale& locale) {
  m_locale = locale;
  emit changed();
  emit progressChanged();
}

void QualityCheck::start() {
  if (m_running || !available()) return;
  m_appliedMode.clear();
  m_error.clear();
  m_hasResult = false;
  m_running = true;
  m_progress = 0.0;
  m_job = m_engine->checkQuality(sampleText(m_language));
  emit changed();
  emit progressChanged();
}

void QualityCheck::cancel() {
  if (!m_running) return;
  m_engine->cancelQuality();
  m_running = false;
  m_job = 0;  // late answers of the cancelled job are ignored
  emit changed();
}

void QualityCheck::clearResult() {
  m_hasResult = false;
  m_error.clear();
  m_progress = 0.0;
  emit changed();
  emit progressChanged();
}

QString QualityCheck::sampleText(const QString& language) {
  QFile file(QStringLiteral(":/quality/%1.txt").arg(language));
  if (!file.open(QIODevice::ReadOnly)) file.setFileName(QStringLiteral(":/quality/en.txt"));
  if (!file.isOpen() && !file.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(file.readAll());
}

double QualityCheck::pplChangePercent(const QualityModeResult& mode) {
  if (!(mode.pplF16 > 0.0)) return 0.0;
  return (mode.ppl - mode.pplF16) / mode.pplF16 * 100.0;
}

bool QualityCheck::meetsBar(const QualityModeResult& mode) {
  return std::isfinite(mode.klMean) && std::isfinite(mode.ppl) && mode.klMean <= kMaxKl &&
         pplChangePercent(mode) <= kMaxPplChangePercent;
}

QString QualityCheck::recommend(const QualityResult& result) {
  if (meetsBar(result.k8v8)) return QStringLiteral("k8v8");
  if (meetsBar(result.k8)) return QStringLiteral("k8");
  return QStringLiteral("f16");
}

QString QualityCheck::modeLine(const QualityModeResult& mode) const {
  const double change = pplChangePercent(mode);
  // Two decimals; small changes keep two significant digits so that they do not read as zero.
  const int decimals = std::fabs(change) >= 0.01 || change == 0.0 ? 2 : 4;
  QString changeText = m_locale.toString(change, 'f', decimals) + m_locale.percent();
  if (change >= 0.0) changeText.prepend(m_locale.positiveSign());
  // KL with two significant digits, as a plain decimal (0.000082, not 8.2E-05).
  int klDecimals = 2;
  if (mode.klMean > 0.0 && std::isfinite(mode.klMean))
    klDecimals = std::clamp(1 - int(std::floor(std::log10(mode.klMean))), 2, 9);
  const QString kl = m_locale.toString(mode.klMean, 'f', klDecimals);
  QString verdict;
  if (meetsBar(mode))
    verdict = tr("no measurable loss");
  else if (mode.klMean <= 10.0 * kMaxKl && change <= 10.0 * kMaxPplChangePercent)
    verdict = tr("a small loss");
  else
    verdict = tr("a noticeable loss");
  return tr("%1: perplexity %2, KL %3 — %4").arg(mode.mode, changeText, kl, verdict);
}

QStringList QualityCheck::resultLines() const {
  if (!m_hasResult) return {};
  return {modeLine(m_result.k8), modeLine(m_result.k8v8)};
}

QString QualityCheck::recommendationText() const {
  if (!m_hasResult) return {};
  const QString mode = recommend(m_result);
  if (mode == QLatin1String("k8v8"))
    return tr("Recommended for this model: k8v8. Both K and V are packed, the smallest cache, with no measurable loss.");
  if (mode == QLatin1String("k8"))
    return tr("Recommended for this model: k8. Packing K costs nothing measurable; packing V as well would.");
  return tr("Recommended for this model: f16. Packing the cache changes this model's answers measurably.");
}

}  // namespace alap::app
