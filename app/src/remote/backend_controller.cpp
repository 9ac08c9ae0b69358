// BackendController: settings keys "backend/remote", "backend/url", "backend/model"; the key file
// is read once at start and rewritten by setApiKey().
#include "remote/backend_controller.h"

#include <QSettings>
#include <QStandardPaths>

#include "download/hf_token.h"
#include "engine/engine_controller.h"
#include "remote/remote_engine.h"

namespace alap::app {

BackendController::BackendController(QSettings* settings, std::shared_ptr<RemoteEngine> remote,
                                     EngineController* engine, const QString& keyPath, QObject* parent)
    : QObject(parent), m_settings(settings), m_remote(std::move(remote)), m_engine(engine),
      m_keyPath(keyPath.isEmpty() ? defaultKeyPath() : keyPath) {
  const alap::download::TokenRead read = alap::download::readToken(m_keyPath, false);
  m_key = read.token;
  m_keyError = read.error;
  if (m_engine) {
    connect(m_engine, &EngineController::modelChanged, this, &BackendController::activeChanged);
    connect(m_engine, &EngineController::statusChanged, this, &BackendController::activeChanged);
  }
}

QString BackendController::defaultKeyPath() {
  return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) + QStringLiteral("/alap/remote_api_key");
}

bool BackendController::remote() const { return m_settings->value(QStringLiteral("backend/remote"), false).toBool(); }
void BackendController::setRemote(bool remote) {
  if (remote == this->remote()) return;
  m_settings->setValue(QStringLiteral("backend/remote"), remote);
  emit changed();
}
QString BackendController::url() const { return m_settings->value(QStringLiteral("backend/url")).toString(); }
void BackendController::setUrl(const QString& url) {
  if (url.trimmed() == this->url()) return;
  m_settings->setValue(QStringLiteral("backend/url"), url.trimmed());
  emit changed();
}
QString BackendController::model() const { return m_settings->value(QStringLiteral("backend/model")).toString(); }
void BackendController::setModel(const QString& model) {
  if (model.trimmed() == this->model()) return;
  m_settings->setValue(QStringLiteral("backend/model"), model.trimmed());
  emit changed();
}

bool BackendController::remoteActive() const {
  return m_engine && m_engine->modelLoaded() && m_engine->modelPath().startsWith(QLatin1String(RemoteEngine::kPathPrefix));
}

bool BackendController::setApiKey(const QString& key) {
  QString error;
  const bool ok = alap::download::writeToken(key.trimmed(), m_keyPath, &error);
  m_keyError = ok ? QString() : error;
  if (ok) m_key = key.trimmed();
  emit keyChanged();
  return ok;
}

void BackendController::connectRemote() {
  RemoteConfig c;
  c.baseUrl = url();
  c.model = model();
  c.apiKey = m_key;
  m_remote->setConfig(c);
  if (m_engine) m_engine->loadModel(QString::fromLatin1(RemoteEngine::kPathPrefix) + c.model);
}

}  // namespace alap::app
