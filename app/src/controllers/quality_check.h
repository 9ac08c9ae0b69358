// QualityCheck: the "Check quality on this model" action of the memory meter. Sends core's
// f16-against-packed comparison (k8, k8v8) over a built-in sample text in the interface language
// to the engine thread, and turns the figures into plain words and a recommended cache mode.
// Not the measurement itself (core/engine/perplexity.h, run by EngineWorker).
#pragma once

#include <QLocale>
#include <QObject>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include "engine/engine_types.h"

namespace alap::app {

class AppSettings;
class EngineController;

class QualityCheck : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("QualityCheck is created by the application")

  Q_PROPERTY(bool available READ available NOTIFY changed)
  Q_PROPERTY(QString hint READ hint NOTIFY changed)
  Q_PROPERTY(bool running READ running NOTIFY changed)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString progressText READ progressText NOTIFY progressChanged)
  Q_PROPERTY(QStringList resultLines READ resultLines NOTIFY changed)
  Q_PROPERTY(QString recommendation READ recommendation NOTIFY changed)  // "k8v8", "k8", "f16" or ""
  Q_PROPERTY(QString recommendationText READ recommendationText NOTIFY changed)
  Q_PROPERTY(QString errorText READ errorText NOTIFY changed)
  // "Use recommended mode": offered when the recommendation (f16, k8 or k8v8) is not the mode the
  // model runs with now; appliedText says what pressing it did (the setting, then the reload).
  Q_PROPERTY(bool canUseRecommendation READ canUseRecommendation NOTIFY changed)
  Q_PROPERTY(QString appliedText READ appliedText NOTIFY changed)

 public:
  // A mode "costs nothing measurable" when its mean KL and its perplexity change stay within these.
  static constexpr double kMaxKl = 2e-4;
  static constexpr double kMaxPplChangePercent = 0.1;

  QualityCheck(EngineController* engine, const QLocale& locale, QObject* parent = nullptr);
  // Where useRecommendedMode() stores the cache mode (without it the action is not offered).
  void setSettings(AppSettings* settings);

  bool available() const;
  QString hint() const;
  bool running() const { return m_running; }
  double progress() const { return m_progress; }
  QString progressText() const;
  QStringList resultLines() const;
  QString recommendation() const { return m_hasResult ? recommend(m_result) : QString(); }
  QString recommendationText() const;
  QString errorText() const { return m_error; }
  bool canUseRecommendation() const;
  QString appliedText() const;

  // "en" or "bn": the sample text the next check runs on; the locale formats every number.
  void setLanguage(const QString& language) { m_language = language; }
  void setLocale(const QLocale& locale);

  Q_INVOKABLE void start();
  Q_INVOKABLE void cancel();
  // Stores the recommended cache mode (k8 or k8v8) in the settings and reloads the model with it.
  Q_INVOKABLE bool useRecommendedMode();

  // The built-in sample text of `language` (":/quality/<language>.txt", English when missing).
  static QString sampleText(const QString& language);
  // Perplexity change of `mode` against f16, in percent (positive: worse).
  static double pplChangePercent(const QualityModeResult& mode);
  static bool meetsBar(const QualityModeResult& mode);
  // k8v8 when it meets the bar, else k8 when it does, else f16.
  static QString recommend(const QualityResult& result);

 signals:
  void changed();
  void progressChanged();
  void finished(const alap::app::QualityResult& result, const QString& recommendation);
  void failed(const QString& message);

 private:
  QString modeLine(const QualityModeResult& mode) const;
  void clearResult();

  EngineController* m_engine;
  AppSettings* m_settings = nullptr;
  QString m_appliedMode;  // the mode useRecommendedMode() set; the model reloads with it
  QString m_appliedPath;  // ...for this model
  QLocale m_locale;
  QString m_language = QStringLiteral("en");
  quint64 m_job = 0;
  bool m_running = false;
  double m_progress = 0.0;
  bool m_hasResult = false;
  QualityResult m_result;
  QString m_error;
};

}  // namespace alap::app
