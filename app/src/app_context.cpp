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
#include "models/model_file_list_model.h"
#include "store/store_worker.h"

namespace alap::app {

AppContext::AppContext(std::unique_ptr<alap::EngineInterface> engine, QSettings* settings, const QString& databasePath,
                       const QLocale& locale, QObject* parent)
    : QObject(parent),
      m_settings(std::make_unique<AppSettings>(settings)),
      m_meter(std::make_unique<MemoryMeter>(locale)),
      m_store(std::make_unique<StoreWorker>()),
      m_engine(std::make_unique<EngineController>(std::move(engine), m_settings.get())),
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
  m_store->open(databasePath);
}

AppContext::~AppContext() {
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
          {QStringLiteral("modelFiles"), QVariant::fromValue(m_modelFiles.get())}};
}

bool AppContext::loadWindow(QQmlApplicationEngine& qml) {
  qml.setInitialProperties(initialProperties());
  qml.load(QUrl(QStringLiteral("qrc:/Alap/qml/Main.qml")));
  return !qml.rootObjects().isEmpty();
}

}  // namespace alap::app
