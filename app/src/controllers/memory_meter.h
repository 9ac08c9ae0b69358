// MemoryMeter: what the VRAM meter shows, from the engine's memory reports: K and V bytes in f16
// against the current mode, weights, free memory, the context the free memory would still hold in
// each mode, the context budget, and the live plot of cache bytes over generated tokens. Every
// number is formatted here with the injected QLocale (Bengali digits in a Bengali UI).
#pragma once

#include <QList>
#include <QLocale>
#include <QObject>
#include <QPointF>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "engine/engine_types.h"

namespace alap::app {

class MemoryMeter : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("MemoryMeter is created by the application")

  Q_PROPERTY(bool hasModel READ hasModel NOTIFY changed)
  Q_PROPERTY(QString cacheMode READ cacheMode NOTIFY changed)
  Q_PROPERTY(QString kFp16Text READ kFp16Text NOTIFY changed)
  Q_PROPERTY(QString vFp16Text READ vFp16Text NOTIFY changed)
  Q_PROPERTY(QString kText READ kText NOTIFY changed)
  Q_PROPERTY(QString vText READ vText NOTIFY changed)
  Q_PROPERTY(QString kvFp16Text READ kvFp16Text NOTIFY changed)
  Q_PROPERTY(QString kvText READ kvText NOTIFY changed)
  Q_PROPERTY(double kvFraction READ kvFraction NOTIFY changed)
  Q_PROPERTY(QString savingText READ savingText NOTIFY changed)
  Q_PROPERTY(QString weightsText READ weightsText NOTIFY changed)
  Q_PROPERTY(QString freeText READ freeText NOTIFY changed)
  Q_PROPERTY(QString freeLabel READ freeLabel NOTIFY changed)
  // Where the model runs ("GPU NVIDIA H200 · 24 of 24 layers" / "CPU · 8 threads") and, when a GPU
  // was wanted but is not used, why (in the interface's language); on the GPU, why long prompts do
  // not take the vendor BLAS where people can act on it (not found, failed its check, no room);
  // empty otherwise.
  Q_PROPERTY(QString backendText READ backendText NOTIFY changed)
  Q_PROPERTY(QString backendNote READ backendNote NOTIFY changed)
  Q_PROPERTY(QVariantList modeCapacity READ modeCapacity NOTIFY changed)
  Q_PROPERTY(QString contextText READ contextText NOTIFY contextChanged)
  Q_PROPERTY(double contextFraction READ contextFraction NOTIFY contextChanged)
  Q_PROPERTY(bool contextWarning READ contextWarning NOTIFY contextChanged)
  Q_PROPERTY(QVariantList fp16Points READ fp16PointList NOTIFY plotChanged)
  Q_PROPERTY(QVariantList modePoints READ modePointList NOTIFY plotChanged)
  Q_PROPERTY(double plotMaxBytes READ plotMaxBytes NOTIFY plotChanged)
  Q_PROPERTY(double plotMaxTokens READ plotMaxTokens NOTIFY plotChanged)
  Q_PROPERTY(QString plotMaxText READ plotMaxText NOTIFY plotChanged)

 public:
  static constexpr int kMaxPlotPoints = 512;
  static constexpr double kContextWarnFraction = 0.85;

  explicit MemoryMeter(const QLocale& locale, QObject* parent = nullptr);

  void setModel(const alap::ModelInfo& info);
  void clearModel();
  void setReport(const alap::MemoryReport& report);
  void addSamples(const QList<MemorySample>& samples);
  void resetPlot();
  void setContextUse(qint64 usedTokens, qint64 contextTokens);

  bool hasModel() const { return m_hasModel; }
  QString cacheMode() const { return m_mode; }
  QString kFp16Text() const { return bytes(m_report.kv_fp16_bytes / 2); }
  QString vFp16Text() const { return bytes(m_report.kv_fp16_bytes - m_report.kv_fp16_bytes / 2); }
  QString kText() const { return bytes(m_report.k_bytes); }
  QString vText() const { return bytes(m_report.v_bytes); }
  QString kvFp16Text() const { return bytes(m_report.kv_fp16_bytes); }
  QString kvText() const { return bytes(m_report.kv_bytes); }
  double kvFraction() const;
  QString savingText() const;
  QString weightsText() const { return bytes(m_report.weights_bytes); }
  QString freeText() const { return bytes(m_report.device_free_bytes); }
  QString freeLabel() const;
  QString backendText() const;
  QString backendNote() const;
  QVariantList modeCapacity() const;
  QString contextText() const;
  double contextFraction() const;
  bool contextWarning() const { return m_hasModel && contextFraction() >= kContextWarnFraction; }
  QList<QPointF> fp16Points() const { return m_fp16Points; }
  QList<QPointF> modePoints() const { return m_modePoints; }
  QVariantList fp16PointList() const { return toVariant(m_fp16Points); }
  QVariantList modePointList() const { return toVariant(m_modePoints); }
  double plotMaxBytes() const;
  double plotMaxTokens() const;
  QString plotMaxText() const { return bytes(quint64(plotMaxBytes())); }

  // Bytes of one cached token in `mode` for the loaded model's shape (0 when unsupported).
  double bytesPerToken(alap::CacheMode mode) const;
  QString bytes(quint64 value) const;
  static QVariantList toVariant(const QList<QPointF>& points);
  const QLocale& locale() const { return m_locale; }
  void setLocale(const QLocale& locale);  // every text again in `locale` (language switch)

 signals:
  void changed();
  void contextChanged();
  void plotChanged();

 private:
  // Why long prompts on the GPU do not take the vendor BLAS, where people can act on it; "" else.
  QString blasNote() const;

  QLocale m_locale;
  bool m_hasModel = false;
  alap::ModelInfo m_info;
  alap::MemoryReport m_report;
  QString m_mode;
  QList<QPointF> m_fp16Points;
  QList<QPointF> m_modePoints;
  qint64 m_contextUsed = 0;
  qint64 m_contextTokens = 0;
};

}  // namespace alap::app
