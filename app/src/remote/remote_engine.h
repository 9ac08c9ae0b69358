// RemoteEngine: core's EngineInterface over an OpenAI-compatible server (alap-cli serve, vLLM,
// llama.cpp's server): load() checks the server lists the model, generate() streams a chat
// completion (server-sent events) and stops within one token by aborting the request. Runs on
// the caller's thread with a QNetworkAccessManager and a local event loop per call (the engine
// worker thread). Holds no KV cache: memory_report() is all zeros. model_info().name is
// "MODEL @ host:port", which the chat stores with each answer. Not the config UI (BackendController).
#pragma once

#include <QString>
#include <mutex>

#include "core/engine/engine.h"

namespace alap::app {

struct RemoteConfig {
  QString baseUrl;  // "http://host:port" or ".../v1"; /v1 is appended when missing
  QString model;    // empty: the first model the server lists
  QString apiKey;   // sent as "Authorization: Bearer"; empty: none
  int connectTimeoutMs = 15000;  // listing the models
  int stallTimeoutMs = 300000;   // an answer with no byte for this long (a long prefill) ends with an error
};

class RemoteEngine final : public alap::EngineInterface {
 public:
  static constexpr const char* kPathPrefix = "remote:";  // load paths "remote:" select this engine

  RemoteEngine() = default;
  explicit RemoteEngine(const RemoteConfig& config) : m_config(config) {}

  // Thread-safe: the next load() uses it.
  void setConfig(const RemoteConfig& config);
  RemoteConfig config() const;
  // "http://h:p" -> "http://h:p/v1"; empty when the URL is not http(s) with a host.
  static QString apiBase(const QString& baseUrl);

  void load(const std::filesystem::path& path, const alap::LoadParams& params, const alap::LoadProgress& progress = {},
            const std::atomic<bool>* cancel = nullptr) override;
  void unload() override;
  bool is_loaded() const override { return m_loaded; }
  alap::ModelInfo model_info() const override;
  alap::GenerateResult generate(const alap::GenerateRequest& request, const alap::TokenCallback& on_text,
                                const std::atomic<bool>& cancel) override;
  void reset_context() override {}
  alap::MemoryReport memory_report() const override { return {}; }
  void set_memory_callback(alap::MemoryCallback callback) override { m_onMemory = std::move(callback); }

 private:
  mutable std::mutex m_mutex;
  RemoteConfig m_config;  // guarded by m_mutex
  RemoteConfig m_active;  // the config of the loaded "model" (caller thread only)
  QString m_base;
  QString m_model;
  bool m_loaded = false;
  alap::MemoryCallback m_onMemory;
};

// Routes a load path: "remote:..." to the RemoteEngine, anything else to the local engine; the
// other one is unloaded first. Every other call goes to the engine of the last load.
class RoutingEngine final : public alap::EngineInterface {
 public:
  RoutingEngine(std::unique_ptr<alap::EngineInterface> local, std::shared_ptr<RemoteEngine> remote);

  void load(const std::filesystem::path& path, const alap::LoadParams& params, const alap::LoadProgress& progress = {},
            const std::atomic<bool>* cancel = nullptr) override;
  void unload() override { current().unload(); }
  bool is_loaded() const override { return current().is_loaded(); }
  alap::ModelInfo model_info() const override { return current().model_info(); }
  alap::GenerateResult generate(const alap::GenerateRequest& request, const alap::TokenCallback& on_text,
                                const std::atomic<bool>& cancel) override {
    return current().generate(request, on_text, cancel);
  }
  void reset_context() override { current().reset_context(); }
  alap::MemoryReport memory_report() const override { return current().memory_report(); }
  void set_memory_callback(alap::MemoryCallback callback) override;
  // The engine calls go to now: the local one, or the remote one after a "remote:" load.
  alap::EngineInterface& active() const { return current(); }

 private:
  alap::EngineInterface& current() const { return m_useRemote ? *m_remote : *m_local; }
  std::unique_ptr<alap::EngineInterface> m_local;
  std::shared_ptr<RemoteEngine> m_remote;
  bool m_useRemote = false;
};

}  // namespace alap::app
