// AppSettings: the persisted preferences (models folder, sampling, context, cache mode, threads,
// GPU layers), validated and clamped here and stored in an injected QSettings. QML binds to the
// properties; the engine and the chat read loadParams() and samplerParams(). Not per conversation:
// the system prompt lives with the conversation in the history store.
#pragma once

#include <QLocale>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QtQml/qqmlregistration.h>
#include <optional>

#include "core/engine/engine.h"

class QSettings;

namespace alap::app {

class AppSettings : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("AppSettings is created by the application")

  Q_PROPERTY(QString modelsFolder READ modelsFolder WRITE setModelsFolder NOTIFY modelsFolderChanged)
  Q_PROPERTY(QString lastModelPath READ lastModelPath WRITE setLastModelPath NOTIFY lastModelPathChanged)
  Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY samplingChanged)
  Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY samplingChanged)
  Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY samplingChanged)
  Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY samplingChanged)
  Q_PROPERTY(double repeatPenalty READ repeatPenalty WRITE setRepeatPenalty NOTIFY samplingChanged)
  Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY samplingChanged)
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY loadSettingsChanged)
  Q_PROPERTY(QString cacheMode READ cacheMode WRITE setCacheMode NOTIFY loadSettingsChanged)
  Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY loadSettingsChanged)
  // GPU layers: -1 = Auto (as many as fit the device, the default), 0 = CPU only, N = the first N.
  Q_PROPERTY(int gpuLayers READ gpuLayers WRITE setGpuLayers NOTIFY loadSettingsChanged)
  // The same as a choice for the window: 0 Auto, 1 CPU only, 2 a number (gpuLayers, at least 1).
  Q_PROPERTY(int gpuLayersChoice READ gpuLayersChoice WRITE setGpuLayersChoice NOTIFY loadSettingsChanged)
  Q_PROPERTY(QStringList cacheModes READ cacheModes CONSTANT)  // values: auto, f16, k8, k8v8
  Q_PROPERTY(QStringList cacheModeLabels READ cacheModeLabels NOTIFY languageChanged)  // what the box shows
  // The mode memory estimates assume: the setting, with auto read as the CPU's f16.
  Q_PROPERTY(QString estimateCacheMode READ estimateCacheMode NOTIFY loadSettingsChanged)
  Q_PROPERTY(int cacheModeIndex READ cacheModeIndex NOTIFY loadSettingsChanged)
  // The interface language ("en" or "bn"), applied at run time by Localizer; persisted.
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
  Q_PROPERTY(QStringList languages READ languages CONSTANT)
  Q_PROPERTY(QStringList languageNames READ languageNames CONSTANT)
  Q_PROPERTY(int languageIndex READ languageIndex NOTIFY languageChanged)
  // The default of "answer in Bengali" for new conversations (each conversation can override it).
  Q_PROPERTY(bool answerInBengali READ answerInBengali WRITE setAnswerInBengali NOTIFY answerInBengaliChanged)

 public:
  explicit AppSettings(QSettings* settings, QObject* parent = nullptr);

  QString modelsFolder() const;
  void setModelsFolder(const QString& folder);
  QString lastModelPath() const;
  void setLastModelPath(const QString& path);
  double temperature() const;
  void setTemperature(double value);
  int topK() const;
  void setTopK(int value);
  double topP() const;
  void setTopP(double value);
  double minP() const;
  void setMinP(double value);
  double repeatPenalty() const;
  void setRepeatPenalty(double value);
  int maxTokens() const;
  void setMaxTokens(int value);
  int contextLength() const;
  void setContextLength(int value);
  QString cacheMode() const;
  void setCacheMode(const QString& mode);
  int threads() const;
  void setThreads(int value);
  static constexpr int kGpuLayersAuto = -1;
  static constexpr int kGpuLayersCpu = 0;
  static constexpr int kMaxGpuLayers = 1000;
  int gpuLayers() const;
  // Below -1 is taken as Auto, above kMaxGpuLayers as kMaxGpuLayers.
  void setGpuLayers(int value);
  int gpuLayersChoice() const { return gpuLayers() < 0 ? 0 : gpuLayers() == 0 ? 1 : 2; }
  // Choosing "a number" restores the last number chosen (32 at first).
  void setGpuLayersChoice(int choice);
  QStringList cacheModes() const;
  QStringList cacheModeLabels() const;
  QString estimateCacheMode() const;
  int cacheModeIndex() const { return int(cacheModes().indexOf(cacheMode())); }

  Q_INVOKABLE void resetSampling();

  // Language: the persisted choice, else the one given by setSystemLanguage (first start), unless
  // overrideLanguage (--lang) set one for this run only.
  QString language() const;
  void setLanguage(const QString& language);
  void setSystemLanguage(const QString& language);
  void overrideLanguage(const QString& language);
  QStringList languages() const { return {QStringLiteral("en"), QStringLiteral("bn")}; }
  QStringList languageNames() const;  // each language in its own script
  int languageIndex() const { return int(languages().indexOf(language())); }
  static QString languageOf(const QLocale& locale);  // "bn" for Bengali locales, else "en"

  bool answerInBengali() const;
  void setAnswerInBengali(bool on);
  std::optional<bool> conversationAnswerInBengali(qint64 conversationId) const;
  void setConversationAnswerInBengali(qint64 conversationId, bool on);

  // A number in the interface's locale ('f' format). `language` is only there so that a QML
  // binding that passes settings.language is re-evaluated when the language changes.
  Q_INVOKABLE QString formatNumber(double value, int decimals, const QString& language = {}) const;

  alap::LoadParams loadParams() const;
  alap::SamplerParams samplerParams() const;
  // {"temperature":..,"top_k":..,...,"cache_mode":".."}: what produced an answer, for the store.
  QString settingsJson() const;

 signals:
  void modelsFolderChanged();
  void lastModelPathChanged();
  void samplingChanged();
  void loadSettingsChanged();
  void languageChanged();
  void answerInBengaliChanged();

 private:
  QVariant value(const char* key, const QVariant& fallback) const;
  void store(const char* key, const QVariant& value);

  QSettings* m_settings;
  QString m_systemLanguage = QStringLiteral("en");
  QString m_overrideLanguage;
};

}  // namespace alap::app
