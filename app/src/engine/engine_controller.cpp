// EngineController: queued calls to EngineWorker and the status machine the window shows.
#include "engine/engine_controller.h"

#include <QFileInfo>
#include <QLocale>
#include <QUrl>

#include "controllers/app_settings.h"
#include "engine/engine_worker.h"
#include "remote/remote_engine.h"

namespace alap::app {

EngineController::EngineController(std::unique_ptr<alap::EngineInterface> engine, AppSettings* settings,
                                   QObject* parent)
    : QObject(parent), m_settings(settings) {
  m_thread.setObjectName(QStringLiteral("alap-engine"));
  m_worker = new EngineWorker(std::move(engine));
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);

  connect(this, &EngineController::loadRequested, m_worker, &EngineWorker::load, Qt::QueuedConnection);
  connect(this, &EngineController::unloadRequested, m_worker, &EngineWorker::unload, Qt::QueuedConnection);
  connect(this, &EngineController::resetRequested, m_worker, &EngineWorker::resetContext, Qt::QueuedConnection);
  connect(this, &EngineController::generateRequested, m_worker, &EngineWorker::generate, Qt::QueuedConnection);
  connect(this, &EngineController::qualityRequested, m_worker, &EngineWorker::checkQuality, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::qualityProgress, this, &EngineController::qualityProgress);
  // Every queued check ends in exactly one of these (a cancelled one in qualityFailed).
  auto qualityDone = [this] {
    if (m_pendingQuality > 0 && --m_pendingQuality == 0) emit checkingQualityChanged();
  };
  connect(m_worker, &EngineWorker::qualityFinished, this, [this, qualityDone](quint64 id, const QualityResult& r) {
    qualityDone();
    emit qualityFinished(id, r);
  });
  connect(m_worker, &EngineWorker::qualityFailed, this,
          [this, qualityDone](quint64 id, const QString& message, bool cancelled) {
            qualityDone();
            emit qualityFailed(id, message, cancelled);
          });

  connect(m_worker, &EngineWorker::loadProgress, this, [this](quint64 id, double fraction, const QString& stage) {
    if (id != m_nextLoad) return;
    m_loadProgress = fraction;
    m_loadStage = stageText(stage);
    emit loadProgressChanged();
  });
  connect(m_worker, &EngineWorker::loadFinished, this, [this](quint64 id, const alap::ModelInfo& info) {
    m_info = info;
    m_loadProgress = 1.0;
    emit loadProgressChanged();
    if (id == m_nextLoad) setError({});
    if (m_settings) m_settings->setLastModelPath(QString::fromStdString(info.path.string()));
    setStatus(Ready);
    emit modelChanged();
    emit modelLoadedChanged(info);
  });
  connect(m_worker, &EngineWorker::loadFailed, this, [this](quint64 id, const QString& message) {
    // The engine unloads the previous model before it loads: nothing is loaded now.
    m_info = {};
    emit modelChanged();
    setStatus(NoModel);
    if (id == m_nextLoad) setError(message);
  });
  connect(m_worker, &EngineWorker::unloaded, this, [this] {
    m_info = {};
    emit modelChanged();
    setStatus(NoModel);
  });
  connect(m_worker, &EngineWorker::generationStarted, this, &EngineController::generationStarted);
  connect(m_worker, &EngineWorker::tokensReady, this, &EngineController::tokensReady);
  connect(m_worker, &EngineWorker::memoryReported, this, &EngineController::memoryReported);
  connect(m_worker, &EngineWorker::generationFinished, this,
          [this](quint64 id, const QString& text, const AnswerStats& stats) {
            if (m_pendingJobs > 0 && --m_pendingJobs == 0 && m_status == Generating) setStatus(Ready);
            emit generationFinished(id, text, stats);
          });
  connect(m_worker, &EngineWorker::generationFailed, this,
          [this](quint64 id, const QString& message, const QString& partial) {
            if (m_pendingJobs > 0 && --m_pendingJobs == 0 && m_status == Generating) setStatus(Ready);
            emit generationFailed(id, message, partial);
          });
  m_thread.start();
}

EngineController::~EngineController() {
  m_worker->requestCancelQuality(~quint64(0));
  m_worker->requestStop(~quint64(0));
  m_worker->requestCancelLoad(~quint64(0));
  m_thread.quit();
  m_thread.wait();
}

quint64 EngineController::checkQuality(const QString& text) {
  const quint64 id = ++m_nextQuality;
  if (m_pendingQuality++ == 0) emit checkingQualityChanged();
  emit qualityRequested(id, text);
  return id;
}

void EngineController::cancelQuality() { m_worker->requestCancelQuality(m_nextQuality); }

bool EngineController::remoteModel() const {
  return modelLoaded() && modelPath().startsWith(QString::fromLatin1(RemoteEngine::kPathPrefix));
}

QString EngineController::modelName() const { return QString::fromStdString(m_info.name); }
QString EngineController::modelPath() const { return QString::fromStdString(m_info.path.string()); }
QString EngineController::cacheMode() const {
  return modelLoaded() ? QString::fromLatin1(alap::cache_mode_name(m_info.cache_mode)) : QString();
}

QString EngineController::modelSummary() const {
  if (!modelLoaded()) return {};
  const QLocale locale;
  //: model summary line: architecture, parameter count, context length, cache mode
  return tr("%1 · %2 parameters · context %3 · cache %4")
      .arg(QString::fromStdString(m_info.architecture),
           locale.formattedDataSize(qint64(m_info.n_params), 1, QLocale::DataSizeSIFormat).remove(QLatin1Char('B')).trimmed(),
           locale.toString(qulonglong(m_info.n_ctx)), cacheMode());
}

void EngineController::loadModel(const QString& path) {
  if (path.isEmpty()) return;
  QString local = path.startsWith(QLatin1String("file:")) ? QUrl(path).toLocalFile() : path;
  if (m_status == Generating) stop();
  m_worker->requestCancelLoad(m_nextLoad);  // a newer load replaces a running one
  LoadSettings settings;
  settings.path = local;
  if (m_settings) settings.params = m_settings->loadParams();
  m_loadProgress = 0.0;
  m_loadStage = tr("Starting");
  emit loadProgressChanged();
  setError({});
  setStatus(Loading);
  emit loadRequested(++m_nextLoad, settings);
}

void EngineController::cancelLoad() {
  if (m_status != Loading) return;
  m_worker->requestCancelLoad(m_nextLoad);
}

void EngineController::unloadModel() {
  stop();
  emit unloadRequested();
}

void EngineController::clearError() { setError({}); }

quint64 EngineController::generate(const alap::GenerateRequest& request) {
  GenerateJob job;
  job.id = ++m_nextJob;
  job.request = request;
  ++m_pendingJobs;
  setStatus(Generating);
  emit generateRequested(job);
  return job.id;
}

void EngineController::stop() { m_worker->requestStop(m_nextJob); }

void EngineController::resetContext() { emit resetRequested(); }

void EngineController::setStatus(Status status) {
  if (status == m_status) return;
  m_status = status;
  emit statusChanged();
}

void EngineController::setError(const QString& text) {
  if (text == m_errorText) return;
  m_errorText = text;
  emit errorTextChanged();
}

QString EngineController::stageText(const QString& stage) const {
  if (stage == QLatin1String("reading model")) return tr("Reading the model");
  if (stage == QLatin1String("tokenizer")) return tr("Preparing the tokenizer");
  if (stage == QLatin1String("allocating cache")) return tr("Allocating the cache");
  if (stage == QLatin1String("copying weights to the GPU")) return tr("Copying the weights to the GPU");
  if (stage == QLatin1String("preparing the weights for the CPU")) return tr("Preparing the weights for the CPU");
  if (stage == QLatin1String("ready")) return tr("Ready");
  return stage;
}

}  // namespace alap::app
