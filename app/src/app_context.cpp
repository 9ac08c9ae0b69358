// AppContext: construction order = dependency order; destruction in reverse (chat first, the
// engine thread joined next, the store thread last so that its final writes reach the disk).
#include "app_context.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QQmlApplicationEngine>

#include "controllers/app_settings.h"
#include "controllers/chat_controller.h"
#include "controllers/memory_meter.h"
#include "engine/engine_controller.h"
#include "i18n/localizer.h"
#include "controllers/models_controller.h"
#include "controllers/quality_check.h"
#include "models/model_file_list_model.h"
#include "remote/backend_controller.h"
#include "remote/remote_engine.h"
#include "store/store_worker.h"

namespace alap::app {

AppContext::AppContext(std::unique_ptr<alap::EngineInterface> engine, QSettings* settings, const QString& databasePath,
                       const QLocale& locale, QObject* parent)
    : QObject(parent),
      m_settings(std::make_unique<AppSettings>(settings)),
      m_localizer(std::make_unique<Localizer>(locale)),
      m_meter(std::make_unique<MemoryMeter>(locale)),
      m_store(std::make_unique<StoreWorker>()),
      m_remote(std::make_shared<RemoteEngine>()),
      m_engine(std::make_unique<EngineController>(std::make_unique<RoutingEngine>(std::move(engine), m_remote),
                                                  m_settings.get())),
      m_modelFiles(std::make_unique<ModelFileListModel>()) {
  auto copy = [](const QString& text) {
    if (QClipboard* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
  };
  m_chat = std::make_unique<ChatController>(m_engine.get(), m_store.get(), m_settings.get(), m_meter.get(), copy);

  MemoryMeter* meter = m_meter.get();
  connect(m_engine.get(), &EngineController::modelLoadedChanged, meter, &MemoryMeter::setModel);
  connect(m_engine.get(), &EngineController::memoryReported, meter, &MemoryMeter::setReport);
  connect(m_engine.get(), &EngineController::statusChanged, meter, [this, meter] {
    if (m_engine->status() == EngineController::NoModel) meter->clearModel();
  });
  connect(m_settings.get(), &AppSettings::modelsFolderChanged, m_modelFiles.get(),
          [this] { m_modelFiles->setFolder(m_settings->modelsFolder()); });
  m_modelFiles->setFolder(m_settings->modelsFolder());

  // Language: the saved choice, else the given (system) locale's; switched at run time.
  loadBundledFonts();
  m_settings->setSystemLanguage(AppSettings::languageOf(locale));
  m_localizer->apply(m_settings->language());
  m_meter->setLocale(m_localizer->locale());
  m_quality = std::make_unique<QualityCheck>(m_engine.get(), m_localizer->locale());
  m_quality->setLanguage(m_localizer->language());
  m_quality->setSettings(m_settings.get());
  connect(m_settings.get(), &AppSettings::languageChanged, m_localizer.get(),
          [this] { m_localizer->apply(m_settings->language()); });
  connect(m_localizer.get(), &Localizer::localeChanged, this, [this](const QLocale& l) {
    m_meter->setLocale(l);
    m_quality->setLanguage(m_localizer->language());
    m_quality->setLocale(l);
    emit m_engine->modelChanged();
    emit m_engine->loadProgressChanged();
    if (const int n = m_modelFiles->rowCount(); n > 0)
      emit m_modelFiles->dataChanged(m_modelFiles->index(0), m_modelFiles->index(n - 1));
    m_chat->relocalize();
    if (m_models) m_models->setLanguage(m_localizer->language());
  });
  m_store->open(databasePath);
  m_models = std::make_unique<ModelsController>(m_settings.get(), m_store.get());
  m_models->setLanguage(m_localizer->language());
  m_backend = std::make_unique<BackendController>(settings, m_remote, m_engine.get());
  // A remote backend chosen last time connects at start (a local model is loaded by main.cpp).
  if (m_backend->remote() && !m_backend->url().isEmpty()) m_backend->connectRemote();
}

AppContext::~AppContext() {
  m_quality.reset();
  m_backend.reset();
  m_models.reset();
  m_chat.reset();
  m_engine.reset();
  m_modelFiles.reset();
  m_store.reset();
}

QVariantMap AppContext::initialProperties() const {
  return {{QStringLiteral("chat"), QVariant::fromValue(m_chat.get())},
          {QStringLiteral("engine"), QVariant::fromValue(m_engine.get())},
          {QStringLiteral("settings"), QVariant::fromValue(m_settings.get())},
          {QStringLiteral("meter"), QVariant::fromValue(m_meter.get())},
          {QStringLiteral("modelFiles"), QVariant::fromValue(m_modelFiles.get())},
          {QStringLiteral("models"), QVariant::fromValue(m_models.get())},
          {QStringLiteral("backend"), QVariant::fromValue(m_backend.get())},
          {QStringLiteral("quality"), QVariant::fromValue(m_quality.get())}};
}

bool AppContext::loadWindow(QQmlApplicationEngine& qml) {
  m_localizer->setQmlEngine(&qml);
  m_localizer->apply(m_settings->language());
  qml.setInitialProperties(initialProperties());
  qml.load(QUrl(QStringLiteral("qrc:/Alap/qml/Main.qml")));
  return !qml.rootObjects().isEmpty();
}

}  // namespace alap::app
