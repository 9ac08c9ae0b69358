// AppSettings: QSettings-backed preferences with range checks.
#include "controllers/app_settings.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QUrl>
#include <cmath>

namespace alap::app {

namespace {
const alap::SamplerParams kDefaults;
}

AppSettings::AppSettings(QSettings* settings, QObject* parent) : QObject(parent), m_settings(settings) {}

QVariant AppSettings::value(const char* key, const QVariant& fallback) const {
  return m_settings->value(QLatin1String(key), fallback);
}

void AppSettings::store(const char* key, const QVariant& v) { m_settings->setValue(QLatin1String(key), v); }

QString AppSettings::modelsFolder() const { return value("models/folder", QString()).toString(); }
void AppSettings::setModelsFolder(const QString& folder) {
  QString f = folder;
  if (f.startsWith(QLatin1String("file://"))) f = QUrl(f).toLocalFile();
  if (f == modelsFolder()) return;
  store("models/folder", f);
  emit modelsFolderChanged();
}

QString AppSettings::lastModelPath() const { return value("models/last", QString()).toString(); }
void AppSettings::setLastModelPath(const QString& path) {
  if (path == lastModelPath()) return;
  store("models/last", path);
  emit lastModelPathChanged();
}

double AppSettings::temperature() const { return value("sampling/temperature", double(kDefaults.temperature)).toDouble(); }
void AppSettings::setTemperature(double v) {
  v = std::isfinite(v) ? qBound(0.0, v, 2.0) : double(kDefaults.temperature);
  if (qFuzzyCompare(v + 1, temperature() + 1)) return;
  store("sampling/temperature", v);
  emit samplingChanged();
}

int AppSettings::topK() const { return value("sampling/topK", kDefaults.top_k).toInt(); }
void AppSettings::setTopK(int v) {
  v = qBound(0, v, 1000);
  if (v == topK()) return;
  store("sampling/topK", v);
  emit samplingChanged();
}

double AppSettings::topP() const { return value("sampling/topP", double(kDefaults.top_p)).toDouble(); }
void AppSettings::setTopP(double v) {
  v = std::isfinite(v) ? qBound(0.0, v, 1.0) : double(kDefaults.top_p);
  if (qFuzzyCompare(v + 1, topP() + 1)) return;
  store("sampling/topP", v);
  emit samplingChanged();
}

double AppSettings::minP() const { return value("sampling/minP", double(kDefaults.min_p)).toDouble(); }
void AppSettings::setMinP(double v) {
  v = std::isfinite(v) ? qBound(0.0, v, 1.0) : double(kDefaults.min_p);
  if (qFuzzyCompare(v + 1, minP() + 1)) return;
  store("sampling/minP", v);
  emit samplingChanged();
}

double AppSettings::repeatPenalty() const {
  return value("sampling/repeatPenalty", double(kDefaults.repeat_penalty)).toDouble();
}
void AppSettings::setRepeatPenalty(double v) {
  v = std::isfinite(v) ? qBound(1.0, v, 2.0) : 1.0;
  if (qFuzzyCompare(v, repeatPenalty())) return;
  store("sampling/repeatPenalty", v);
  emit samplingChanged();
}

int AppSettings::maxTokens() const { return value("sampling/maxTokens", 1024).toInt(); }
void AppSettings::setMaxTokens(int v) {
  v = qBound(16, v, 32768);
  if (v == maxTokens()) return;
  store("sampling/maxTokens", v);
  emit samplingChanged();
}

int AppSettings::contextLength() const { return value("load/contextLength", 4096).toInt(); }
void AppSettings::setContextLength(int v) {
  v = qBound(256, v, 262144);
  if (v == contextLength()) return;
  store("load/contextLength", v);
  emit loadSettingsChanged();
}

QString AppSettings::cacheMode() const {
  const QString mode = value("load/cacheMode", QStringLiteral("auto")).toString();
  return cacheModes().contains(mode) ? mode : QStringLiteral("auto");
}
QString AppSettings::estimateCacheMode() const {
  const QString mode = cacheMode();
  return mode == QLatin1String("auto") ? QStringLiteral("k8") : mode;  // auto is k8 where the model can pack it
}
void AppSettings::setCacheMode(const QString& mode) {
  if (!cacheModes().contains(mode) || mode == cacheMode()) return;
  store("load/cacheMode", mode);
  emit loadSettingsChanged();
}

int AppSettings::threads() const { return value("load/threads", 0).toInt(); }
void AppSettings::setThreads(int v) {
  v = qBound(0, v, 256);
  if (v == threads()) return;
  store("load/threads", v);
  emit loadSettingsChanged();
}

int AppSettings::gpuLayers() const {
  bool ok = false;
  const int v = value("load/gpuLayers", kGpuLayersAuto).toInt(&ok);
  if (!ok || v < kGpuLayersAuto) return kGpuLayersAuto;  // a damaged settings file: the default
  return qMin(v, kMaxGpuLayers);
}
void AppSettings::setGpuLayers(int v) {
  v = qBound(kGpuLayersAuto, v, kMaxGpuLayers);
  if (v > 0) store("load/gpuLayersNumber", v);
  if (v == gpuLayers()) return;
  store("load/gpuLayers", v);
  emit loadSettingsChanged();
}

void AppSettings::setGpuLayersChoice(int choice) {
  if (choice == 0) {
    setGpuLayers(kGpuLayersAuto);
  } else if (choice == 1) {
    setGpuLayers(kGpuLayersCpu);
  } else if (choice == 2 && gpuLayers() <= 0) {
    const int last = value("load/gpuLayersNumber", 32).toInt();
    setGpuLayers(qBound(1, last, kMaxGpuLayers));
  }
}

QStringList AppSettings::cacheModes() const {
  return {QStringLiteral("auto"), QStringLiteral("f16"), QStringLiteral("k8"), QStringLiteral("k8v8")};
}

QStringList AppSettings::cacheModeLabels() const {
  //: the cache mode setting's default: the engine picks k8 (int8 keys), or f16 for a model whose
  //: key size cannot be packed
  return {tr("Automatic (k8, or f16 where a model needs it)"), QStringLiteral("f16"), QStringLiteral("k8"), QStringLiteral("k8v8")};
}

void AppSettings::resetSampling() {
  for (const char* key : {"sampling/temperature", "sampling/topK", "sampling/topP", "sampling/minP",
                          "sampling/repeatPenalty", "sampling/maxTokens"})
    m_settings->remove(QLatin1String(key));
  emit samplingChanged();
}

QString AppSettings::languageOf(const QLocale& locale) {
  return locale.language() == QLocale::Bengali ? QStringLiteral("bn") : QStringLiteral("en");
}

QString AppSettings::language() const {
  if (!m_overrideLanguage.isEmpty()) return m_overrideLanguage;
  const QString stored = value("ui/language", QString()).toString();
  return languages().contains(stored) ? stored : m_systemLanguage;
}

void AppSettings::setLanguage(const QString& language) {
  if (!languages().contains(language)) return;
  const QString before = this->language();
  m_overrideLanguage.clear();
  store("ui/language", language);
  if (language != before) emit languageChanged();
}

void AppSettings::setSystemLanguage(const QString& language) {
  if (!languages().contains(language)) return;
  const QString before = this->language();
  m_systemLanguage = language;
  if (this->language() != before) emit languageChanged();
}

void AppSettings::overrideLanguage(const QString& language) {
  if (!languages().contains(language)) return;
  const QString before = this->language();
  m_overrideLanguage = language;
  if (language != before) emit languageChanged();
}

QStringList AppSettings::languageNames() const {
  return {QStringLiteral("English"), QString::fromUtf8("\u09AC\u09BE\u0982\u09B2\u09BE")};
}

bool AppSettings::answerInBengali() const { return value("chat/answerInBengali", false).toBool(); }
void AppSettings::setAnswerInBengali(bool on) {
  if (on == answerInBengali()) return;
  store("chat/answerInBengali", on);
  emit answerInBengaliChanged();
}

std::optional<bool> AppSettings::conversationAnswerInBengali(qint64 conversationId) const {
  const QVariant v = m_settings->value(QStringLiteral("conversations/%1/answerInBengali").arg(conversationId));
  if (!v.isValid()) return std::nullopt;
  return v.toBool();
}

void AppSettings::setConversationAnswerInBengali(qint64 conversationId, bool on) {
  if (conversationId == 0) return;
  m_settings->setValue(QStringLiteral("conversations/%1/answerInBengali").arg(conversationId), on);
}

QString AppSettings::formatNumber(double value, int decimals, const QString&) const {
  return QLocale().toString(value, 'f', qBound(0, decimals, 6));
}

alap::LoadParams AppSettings::loadParams() const {
  alap::LoadParams p;
  p.n_ctx = size_t(contextLength());
  p.cache_mode = alap::parse_cache_mode(cacheMode().toStdString()).value_or(alap::CacheMode::f16);
  p.cache_mode_default = cacheMode() == QLatin1String("auto");
  p.n_threads = size_t(threads());
  p.gpu_layers = gpuLayers();
  return p;
}

alap::SamplerParams AppSettings::samplerParams() const {
  alap::SamplerParams p;
  p.temperature = float(temperature());
  p.top_k = topK();
  p.top_p = float(topP());
  p.min_p = float(minP());
  p.repeat_penalty = float(repeatPenalty());
  return p;
}

QString AppSettings::settingsJson() const {
  QJsonObject o;
  o[QStringLiteral("temperature")] = temperature();
  o[QStringLiteral("top_k")] = topK();
  o[QStringLiteral("top_p")] = topP();
  o[QStringLiteral("min_p")] = minP();
  o[QStringLiteral("repeat_penalty")] = repeatPenalty();
  o[QStringLiteral("n_ctx")] = contextLength();
  o[QStringLiteral("cache_mode")] = cacheMode();
  o[QStringLiteral("gpu_layers")] = gpuLayers();
  return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

}  // namespace alap::app
