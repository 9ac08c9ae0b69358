// AppContext: the composition root shared by main.cpp, the e2e test and the screenshot tool.
// It builds settings, the engine thread, the store thread, the view models and the chat
// controller from what it is given (an engine, a QSettings, a database path, a locale) and hands
// them to QML as the root's initial properties. Not a singleton: whoever creates it owns it.
#pragma once

#include <QLocale>
#include <QObject>
#include <QVariantMap>
#include <memory>

#include "core/engine/engine.h"

class QSettings;
class QQmlApplicationEngine;

namespace alap::app {

class AppSettings;
class BackendController;
class ModelsController;
class RemoteEngine;
class ChatController;
class EngineController;
class Localizer;
class MemoryMeter;
class ModelFileListModel;
class QualityCheck;
class StoreWorker;

class AppContext : public QObject {
  Q_OBJECT

 public:
  AppContext(std::unique_ptr<alap::EngineInterface> engine, QSettings* settings, const QString& databasePath,
             const QLocale& locale, QObject* parent = nullptr);
  ~AppContext() override;

  // Loads qrc:/Alap/qml/Main.qml with the objects below as required properties; false on failure.
  bool loadWindow(QQmlApplicationEngine& qml);
  QVariantMap initialProperties() const;

  AppSettings* settings() const { return m_settings.get(); }
  EngineController* engine() const { return m_engine.get(); }
  StoreWorker* store() const { return m_store.get(); }
  ChatController* chat() const { return m_chat.get(); }
  MemoryMeter* meter() const { return m_meter.get(); }
  ModelFileListModel* modelFiles() const { return m_modelFiles.get(); }
  // Applies AppSettings::language now and whenever it changes (no restart).
  Localizer* localizer() const { return m_localizer.get(); }
  ModelsController* models() const { return m_models.get(); }
  BackendController* backend() const { return m_backend.get(); }
  QualityCheck* quality() const { return m_quality.get(); }

 private:
  std::unique_ptr<AppSettings> m_settings;
  std::unique_ptr<Localizer> m_localizer;
  std::unique_ptr<MemoryMeter> m_meter;
  std::unique_ptr<StoreWorker> m_store;
  std::shared_ptr<RemoteEngine> m_remote;  // shared with the engine thread's RoutingEngine
  std::unique_ptr<EngineController> m_engine;
  std::unique_ptr<ModelFileListModel> m_modelFiles;
  std::unique_ptr<ChatController> m_chat;
  std::unique_ptr<ModelsController> m_models;
  std::unique_ptr<BackendController> m_backend;
  std::unique_ptr<QualityCheck> m_quality;
};

}  // namespace alap::app
