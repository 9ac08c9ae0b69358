// BackendController: the "backend" settings of the window (local engine, or a remote
// OpenAI-compatible server: URL, model, optional API key) and the Connect action. URL and model
// live in QSettings; the API key only in a user-only file (hf_token.h's writeToken, mode 0600)
// beside the Hugging Face token, never in SQLite. Not the remote client itself (remote_engine.h).
#pragma once

#include <QObject>
#include <QtQml/qqmlregistration.h>
#include <memory>

class QSettings;

namespace alap::app {

class EngineController;
class RemoteEngine;

class BackendController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("BackendController is created by the application")

  Q_PROPERTY(bool remote READ remote WRITE setRemote NOTIFY changed)  // the chosen backend
  Q_PROPERTY(QString url READ url WRITE setUrl NOTIFY changed)
  Q_PROPERTY(QString model READ model WRITE setModel NOTIFY changed)
  Q_PROPERTY(bool hasKey READ hasKey NOTIFY keyChanged)
  Q_PROPERTY(QString keyError READ keyError NOTIFY keyChanged)
  Q_PROPERTY(bool remoteActive READ remoteActive NOTIFY activeChanged)  // a remote model is connected

 public:
  BackendController(QSettings* settings, std::shared_ptr<RemoteEngine> remote, EngineController* engine,
                    const QString& keyPath = QString(), QObject* parent = nullptr);

  static QString defaultKeyPath();  // <GenericConfigLocation>/alap/remote_api_key

  bool remote() const;
  void setRemote(bool remote);
  QString url() const;
  void setUrl(const QString& url);
  QString model() const;
  void setModel(const QString& model);
  bool hasKey() const { return !m_key.isEmpty(); }
  QString keyError() const { return m_keyError; }
  bool remoteActive() const;

  // Writes (or, when empty, deletes) the key file; false with keyError set on failure.
  Q_INVOKABLE bool setApiKey(const QString& key);
  // Connects to the remote server through the engine thread (a "load" of "remote:MODEL").
  Q_INVOKABLE void connectRemote();

 signals:
  void changed();
  void keyChanged();
  void activeChanged();

 private:
  QSettings* m_settings;
  std::shared_ptr<RemoteEngine> m_remote;
  EngineController* m_engine;
  QString m_keyPath;
  QString m_key;
  QString m_keyError;
};

}  // namespace alap::app
