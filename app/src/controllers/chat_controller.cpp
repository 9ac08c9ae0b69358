// ChatController: every history write goes through StoreWorker::post; every engine call through
// EngineController. The GUI thread only updates models in the completions.
#include "controllers/chat_controller.h"

#include <algorithm>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>
#include <array>
#include <optional>
#include <utility>

#include "controllers/app_settings.h"
#include "controllers/memory_meter.h"
#include "engine/engine_controller.h"
#include "store/store_worker.h"

namespace alap::app {

namespace st = alap::store;

namespace {

st::MessageStatus statusOf(const QString& s) {
  return st::parse_message_status(s.toStdString()).value_or(st::MessageStatus::complete);
}

st::NewMessage userMessage(const std::string& content) {
  st::NewMessage m;
  m.role = "user";
  m.content = content;
  return m;
}

// The empty answer row an answer streams into; it ends complete, stopped or error.
st::NewMessage answerPlaceholder(const std::string& model, const std::string& settings) {
  st::NewMessage m;
  m.role = "assistant";
  m.status = st::MessageStatus::streaming;
  m.model = model;
  m.settings_json = settings;
  return m;
}

// What an export or import on the store thread came to; the words are chosen on the GUI thread.
enum class FileProblem { none, unreadable, tooLarge, notJson, foreign, newer, invalid, failed };

struct FileOutcome {
  FileProblem problem = FileProblem::none;
  QString detail;  // the system's or the store's reason
  st::Id conversation = 0;
  QString title;
};

QString localPath(const QString& file) {
  return file.startsWith(QLatin1String("file:")) ? QUrl(file).toLocalFile() : file;
}

// Runs on the store thread.
FileOutcome exportTo(st::Store& s, st::Id id, const QString& path, bool json) {
  FileOutcome out;
  try {
    const std::string text = json ? s.export_json(id) : s.export_markdown(id);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !file.commit()) {
      out.problem = FileProblem::unreadable;
      out.detail = file.errorString();
    }
  } catch (const std::exception& e) {
    out.problem = FileProblem::failed;
    out.detail = QString::fromUtf8(e.what());
  }
  return out;
}

// Runs on the store thread. Checks what the file is before the store validates every field, so
// that a foreign or newer file gets words of its own; the store writes all or nothing.
FileOutcome importFrom(st::Store& s, const QString& path, qint64 maxBytes) {
  FileOutcome out;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    out.problem = FileProblem::unreadable;
    out.detail = file.errorString();
    return out;
  }
  if (file.size() > maxBytes) {
    out.problem = FileProblem::tooLarge;
    return out;
  }
  const QByteArray data = file.readAll();
  QJsonParseError parseError{};
  const QJsonDocument doc = QJsonDocument::fromJson(data, &parseError);
  if (parseError.error != QJsonParseError::NoError) {
    out.problem = FileProblem::notJson;
    out.detail = parseError.errorString();
    return out;
  }
  if (!doc.isObject() || doc.object().value(QLatin1String("format")).toString() != QLatin1String("alap-conversation")) {
    out.problem = FileProblem::foreign;
    return out;
  }
  const QJsonValue version = doc.object().value(QLatin1String("version"));
  if (version.isDouble() && version.toDouble() > 1.0) {
    out.problem = FileProblem::newer;
    return out;
  }
  try {
    out.conversation = s.import_json(std::string_view(data.constData(), size_t(data.size())));
    if (const auto c = s.get_conversation(out.conversation)) out.title = QString::fromStdString(c->title);
  } catch (const st::StoreError& e) {
    out.problem = e.kind() == st::ErrorKind::invalid ? FileProblem::invalid : FileProblem::failed;
    out.detail = QString::fromUtf8(e.what());
  } catch (const std::exception& e) {
    out.problem = FileProblem::failed;
    out.detail = QString::fromUtf8(e.what());
  }
  return out;
}

QString titleFrom(const QString& text) {
  QString line = text.section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() > 48) line = line.left(47) + QChar(0x2026);
  return line;
}

}  // namespace

ChatController::ChatController(EngineController* engine, StoreWorker* store, AppSettings* settings, MemoryMeter* meter,
                               CopyFunction copy, QObject* parent)
    : QObject(parent), m_engine(engine), m_store(store), m_settings(settings), m_meter(meter), m_copy(std::move(copy)) {
  connect(m_engine, &EngineController::statusChanged, this, &ChatController::canSendChanged);
  connect(m_engine, &EngineController::tokensReady, this, &ChatController::onTokens);
  connect(m_engine, &EngineController::generationFinished, this, &ChatController::onFinished);
  connect(m_engine, &EngineController::generationFailed, this, &ChatController::onFailed);
  connect(m_engine, &EngineController::generationStarted, this, [this](quint64 job) {
    if (job != m_genJob || m_genStarted) return;
    m_genStarted = true;
    m_meter->resetPlot();  // the plot shows this answer from its first token
    emit canSendChanged();
  });
  connect(m_engine, &EngineController::checkingQualityChanged, this, &ChatController::canSendChanged);
  // What a person should know about the model just loaded (the CLI prints these as warnings).
  connect(m_engine, &EngineController::modelLoadedChanged, this, [this](const alap::ModelInfo& info) {
    using S = alap::ModelInfo::GpuStatus;
    const bool gpuWarned = info.gpu_status != S::used && info.gpu_status != S::not_requested &&
                           std::find(info.warnings.begin(), info.warnings.end(), info.gpu_reason) != info.warnings.end();
    if (info.chat_template_builtin) {
      setNotice(tr("This model's chat template could not be used, so Alap writes the chat in the generic ChatML "
                   "form; its answers may be worse."));
    } else if (gpuWarned) {
      setNotice(tr("The GPU layers you asked for could not be used: the model runs on the CPU. The memory panel says why."));
    }
  });

  connect(m_store, &StoreWorker::opened, this, [this](bool readOnly, const QString& message) {
    m_readOnly = readOnly;
    m_historyMessage = message;
    emit historyStateChanged();
    emit canSendChanged();
    if (!readOnly) {
      // Conversations deleted more than a week ago are gone for good.
      const qint64 before = QDateTime::currentMSecsSinceEpoch() - qint64(7) * 24 * 3600 * 1000;
      m_store->post([before](st::Store& s) { s.purge_deleted_before(before); });
    }
    refreshConversations();
  });
  connect(m_store, &StoreWorker::failed, this, [this](const QString& message) {
    if (m_sendPending) {
      m_sendPending = false;
      emit canSendChanged();
    }
    setNotice(tr("The history could not be saved: %1").arg(message));
  });
  connect(m_store, &StoreWorker::backedUp, this,
          [this](const QString& path) { setNotice(tr("A copy of the history was saved to %1").arg(path)); });

  m_checkpoint.setInterval(kCheckpointMs);
  connect(&m_checkpoint, &QTimer::timeout, this, [this] {
    if (m_genMessageId == 0 || m_readOnly) return;
    const qint64 id = m_genMessageId;
    const std::string text = m_genText.toStdString();
    m_store->post([id, text](st::Store& s) { s.update_message(id, text, st::MessageStatus::streaming); });
  });
  m_searchTimer.setSingleShot(true);
  m_searchTimer.setInterval(kSearchDelayMs);
  connect(&m_searchTimer, &QTimer::timeout, this, &ChatController::runSearch);
  m_undoTimer.setSingleShot(true);
  m_undoTimer.setInterval(kUndoMs);
  connect(&m_undoTimer, &QTimer::timeout, this, [this] {
    m_undoId = 0;
    m_undoText.clear();
    emit undoChanged();
  });
}

QString ChatController::currentTitle() const {
  if (m_currentId == 0) return tr("New chat");
  const QString t = m_conversations.titleOf(m_currentId);
  return t.isEmpty() ? tr("Untitled chat") : t;
}

void ChatController::setSystemPrompt(const QString& prompt) {
  if (prompt == m_systemPrompt) return;
  m_systemPrompt = prompt;
  emit systemPromptChanged();
  if (m_currentId != 0 && !m_readOnly) {
    const qint64 id = m_currentId;
    const std::string p = prompt.toStdString();
    m_store->post([id, p](st::Store& s) { s.set_system_prompt(id, p); });
  }
}

bool ChatController::canSend() const {
  return m_engine->modelLoaded() && m_genJob == 0 && !m_sendPending && !m_readOnly;
}

QString ChatController::composerHint() const {
  if (m_readOnly) return tr("The history is read-only, so new messages cannot be saved.");
  if (m_engine->status() == EngineController::Loading) return tr("Loading the model…");
  if (!m_engine->modelLoaded()) return tr("Load a model to start chatting: choose one under Models.");
  if (waitingForQualityCheck())
    return tr("Waiting for the quality check… Esc cancels the answer.");
  if (m_genJob != 0 || m_sendPending) return tr("Answering… press Esc to stop.");
  return tr("Message Alap (Enter sends, Shift+Enter adds a line)");
}

bool ChatController::waitingForQualityCheck() const {
  return (m_sendPending || (m_genJob != 0 && !m_genStarted)) && m_engine->checkingQuality();
}

bool ChatController::canRegenerate() const {
  const int n = m_messages.count();
  return canSend() && n >= 2 && m_messages.at(n - 1).role == QLatin1String("assistant") &&
         m_messages.at(n - 1).id != 0 && m_messages.at(n - 2).role == QLatin1String("user") &&
         m_messages.at(n - 2).id != 0;
}

void ChatController::setSearchQuery(const QString& query) {
  if (query == m_searchQuery) return;
  m_searchQuery = query;
  emit searchQueryChanged();
  m_searchTimer.start();
}

void ChatController::refreshConversations() {
  m_store->post([](st::Store& s) { return s.list_conversations(); }, this,
                [this](std::vector<st::Conversation> rows) {
                  m_conversations.setConversations(std::move(rows));
                  emit currentConversationChanged();
                });
}

void ChatController::setCurrent(qint64 id, const QString& systemPrompt) {
  m_currentId = id;
  m_conversations.setCurrentId(id);
  m_systemPrompt = systemPrompt;
  const bool bengali = m_settings->conversationAnswerInBengali(id).value_or(m_settings->answerInBengali());
  if (bengali != m_answerInBengali) {
    m_answerInBengali = bengali;
    emit answerInBengaliChanged();
  }
  emit currentConversationChanged();
  emit systemPromptChanged();
  emit canSendChanged();
}

void ChatController::newConversation() {
  if (m_sendPending) return;
  setCurrent(0, QString());
  m_messages.clear();
  emit canSendChanged();
}

void ChatController::selectConversation(qint64 id) {
  if (id == m_currentId || m_sendPending) return;
  loadMessages(id);
}

void ChatController::loadMessages(qint64 id, qint64 scrollToMessageId) {
  m_store->post(
      [id](st::Store& s) { return std::make_pair(s.get_conversation(id), s.list_messages(id)); }, this,
      [this, id, scrollToMessageId](std::pair<std::optional<st::Conversation>, std::vector<st::Message>> r) {
        if (!r.first) return;
        setCurrent(id, QString::fromStdString(r.first->system_prompt));
        m_messages.setMessages(r.second);
        for (int row = 0; row < m_messages.count(); ++row) {
          const MessageRow& m = m_messages.at(row);
          if (m.status != QLatin1String("streaming")) continue;
          if (m.id == m_genMessageId) {
            m_messages.setContent(row, QString());
            m_messages.appendStreamText(row, m_genText);
          } else {
            // Left streaming by a crash: what was saved is kept, marked stopped.
            m_messages.setStatus(row, QStringLiteral("stopped"));
            if (!m_readOnly) {
              const qint64 mid = m.id;
              const std::string content = m.content.toStdString();
              m_store->post([mid, content](st::Store& s) { s.update_message(mid, content, st::MessageStatus::stopped); });
            }
          }
        }
        emit canSendChanged();
        const int row = scrollToMessageId ? m_messages.rowOfId(scrollToMessageId) : m_messages.count() - 1;
        if (row >= 0) emit scrollToRow(row);
      });
}

bool ChatController::send(const QString& text) {
  const QString t = text.trimmed();
  if (t.isEmpty() || !canSend()) return false;
  m_sendPending = true;
  emit canSendChanged();

  const qint64 conversation = m_currentId;
  const std::string title = titleFrom(t).toStdString();
  const std::string system = m_systemPrompt.toStdString();
  const std::string model = m_engine->modelPath().toStdString();
  const std::string modelName = m_engine->modelName().toStdString();
  const std::string settings = m_settings->settingsJson().toStdString();
  const std::string content = t.toStdString();

  const int userRow = m_messages.append({0, QStringLiteral("user"), t, QStringLiteral("complete"), {}, {}, {}});
  const int answerRow = m_messages.append({0, QStringLiteral("assistant"), {}, QStringLiteral("streaming"), {}, {}, {}});
  emit scrollToRow(answerRow);

  m_store->post(
      [=](st::Store& s) {
        const st::Id c = conversation != 0 ? conversation : s.create_conversation(title, system, model, settings);
        const st::Id u = s.append_message(c, userMessage(content));  // committed first
        const st::Id a = s.append_message(c, answerPlaceholder(modelName, settings));
        return std::array<st::Id, 3>{c, u, a};
      },
      this, [this, conversation, userRow, answerRow](std::array<st::Id, 3> ids) {
        if (conversation == 0 && m_currentId == 0) {
          m_settings->setConversationAnswerInBengali(ids[0], m_answerInBengali);
          setCurrent(ids[0], m_systemPrompt);
        }
        if (m_currentId == ids[0]) {
          m_messages.setId(userRow, ids[1]);
          m_messages.setId(answerRow, ids[2]);
        }
        refreshConversations();
        startAnswer(ids[0], ids[2]);
      });
  return true;
}

void ChatController::startAnswer(qint64 conversationId, qint64 assistantId) {
  alap::GenerateRequest request;
  for (int row = 0; row < m_messages.count(); ++row) {
    const MessageRow& m = m_messages.at(row);
    if (m.id == assistantId) break;
    if (m.status == QLatin1String("error") || m.content.isEmpty()) continue;
    request.messages.push_back({m.role.toStdString(), m.content.toStdString(), {}});
  }
  QString system = m_systemPrompt;
  if (m_answerInBengali) system = system.isEmpty() ? bengaliInstruction() : system + QStringLiteral("\n\n") + bengaliInstruction();
  request.system_prompt = system.toStdString();
  request.sampling = m_settings->samplerParams();
  request.sampling.seed = QRandomGenerator::system()->generate64();
  request.max_tokens = m_settings->maxTokens();

  m_genConversationId = conversationId;
  m_genMessageId = assistantId;
  m_genText.clear();
  m_genStarted = false;
  m_genJob = m_engine->generate(request);
  if (m_stopRequested) m_engine->stop();  // Esc came while the user's message was being saved
  m_stopRequested = false;
  m_sendPending = false;
  m_checkpoint.start();
  emit generatingChanged();
  emit canSendChanged();
}

int ChatController::streamingRow() const {
  if (m_currentId != m_genConversationId || m_genMessageId == 0) return -1;
  return m_messages.rowOfId(m_genMessageId);
}

void ChatController::onTokens(quint64 job, const QString& text, const QList<MemorySample>& samples) {
  if (job != m_genJob) return;
  m_genText += text;
  m_messages.appendStreamText(streamingRow(), text);
  m_meter->addSamples(samples);
}

void ChatController::onFinished(quint64 job, const QString& text, const AnswerStats& stats) {
  if (job != m_genJob) return;
  m_genText = text;
  QJsonObject o;
  o[QStringLiteral("tokens")] = stats.generatedTokens;
  o[QStringLiteral("prompt_tokens")] = stats.promptTokens;
  o[QStringLiteral("tokens_per_s")] = stats.tokensPerSecond;
  o[QStringLiteral("ttft_ms")] = stats.timeToFirstTokenMs;
  o[QStringLiteral("total_ms")] = stats.totalMs;
  o[QStringLiteral("cache_mode")] = stats.cacheMode;
  o[QStringLiteral("stop_reason")] = stats.stopReason;
  m_meter->setContextUse(stats.promptTokens + stats.generatedTokens, 0);
  if (!stats.message.isEmpty()) setNotice(stats.message);
  const QString status = stats.stopReason == QLatin1String("cancelled") ? QStringLiteral("stopped") : QStringLiteral("complete");
  commitAnswer(status, QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)), {});
}

void ChatController::onFailed(quint64 job, const QString& message, const QString& partial) {
  if (job != m_genJob) return;
  m_genText = partial;
  QJsonObject o;
  o[QStringLiteral("error")] = message;
  commitAnswer(QStringLiteral("error"), QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)), message);
}

void ChatController::commitAnswer(const QString& status, const QString& statsJson, const QString& errorText) {
  const qint64 id = m_genMessageId;
  const std::string content = m_genText.toStdString();
  const std::string stats = statsJson.toStdString();
  const int row = streamingRow();
  if (row >= 0) {
    m_messages.setContent(row, m_genText);
    m_messages.setStatus(row, status, MessageListModel::formatStats(statsJson), errorText);
  }
  m_checkpoint.stop();
  m_genJob = 0;
  m_genStarted = false;
  m_genMessageId = 0;
  m_genConversationId = 0;
  m_genText.clear();
  emit generatingChanged();
  emit canSendChanged();
  if (m_readOnly) return;
  const st::MessageStatus s = statusOf(status);
  m_store->post(
      [id, content, stats, s](st::Store& store) {
        store.update_message(id, content, s);
        store.set_message_stats(id, stats);
      },
      this, [this, id, status] {
        emit answerCommitted(id, status);
        refreshConversations();
      });
}

void ChatController::stop() {
  if (m_sendPending) m_stopRequested = true;
  if (m_genJob != 0) m_engine->stop();
}

void ChatController::regenerate() {
  if (!canRegenerate()) return;
  const int answerRow = m_messages.count() - 1;
  const int userRow = answerRow - 1;
  const qint64 userId = m_messages.at(userRow).id;
  const qint64 conversation = m_currentId;
  const std::string modelName = m_engine->modelName().toStdString();
  const std::string settings = m_settings->settingsJson().toStdString();
  m_sendPending = true;
  emit canSendChanged();
  m_messages.truncateAfter(userRow);
  const int newRow = m_messages.append({0, QStringLiteral("assistant"), {}, QStringLiteral("streaming"), {}, {}, {}});
  m_store->post(
      [=](st::Store& s) {
        s.delete_messages_after(userId);
        return s.append_message(conversation, answerPlaceholder(modelName, settings));
      },
      this, [this, conversation, newRow](st::Id answerId) {
        if (m_currentId == conversation) m_messages.setId(newRow, answerId);
        startAnswer(conversation, answerId);
      });
}

bool ChatController::editAndResend(int row, const QString& text) {
  const QString t = text.trimmed();
  if (t.isEmpty() || !canSend() || row < 0 || row >= m_messages.count()) return false;
  const MessageRow& m = m_messages.at(row);
  if (m.role != QLatin1String("user") || m.id == 0) return false;
  const qint64 userId = m.id;
  const qint64 conversation = m_currentId;
  const std::string content = t.toStdString();
  const std::string modelName = m_engine->modelName().toStdString();
  const std::string settings = m_settings->settingsJson().toStdString();
  m_sendPending = true;
  emit canSendChanged();
  m_messages.setContent(row, t);
  m_messages.truncateAfter(row);
  const int newRow = m_messages.append({0, QStringLiteral("assistant"), {}, QStringLiteral("streaming"), {}, {}, {}});
  m_store->post(
      [=](st::Store& s) {
        s.update_message(userId, content, st::MessageStatus::complete);
        s.delete_messages_after(userId);
        return s.append_message(conversation, answerPlaceholder(modelName, settings));
      },
      this, [this, conversation, newRow](st::Id answerId) {
        if (m_currentId == conversation) m_messages.setId(newRow, answerId);
        startAnswer(conversation, answerId);
      });
  return true;
}

void ChatController::copyMessage(int row) {
  if (row >= 0 && row < m_messages.count()) copyText(m_messages.at(row).content);
}

void ChatController::copyText(const QString& text) {
  if (m_copy) m_copy(text);
  setNotice(tr("Copied"));
}

void ChatController::renameConversation(qint64 id, const QString& title) {
  const QString t = title.simplified();
  if (t.isEmpty() || m_readOnly) return;
  const std::string s8 = t.toStdString();
  m_store->post([id, s8](st::Store& s) { s.rename_conversation(id, s8); }, this, [this] { refreshConversations(); });
}

void ChatController::setPinned(qint64 id, bool pinned) {
  if (m_readOnly) return;
  m_store->post([id, pinned](st::Store& s) { s.set_pinned(id, pinned); }, this, [this] { refreshConversations(); });
}

void ChatController::deleteConversation(qint64 id) {
  if (m_readOnly || id == 0) return;
  if (m_genJob != 0 && m_genConversationId == id) stop();
  const QString title = m_conversations.titleOf(id);
  m_store->post([id](st::Store& s) { s.soft_delete_conversation(id); }, this, [this, id, title] {
    m_undoId = id;
    m_undoText = tr("Deleted “%1”").arg(title);
    m_undoTimer.start();
    emit undoChanged();
    if (m_currentId == id) newConversation();
    refreshConversations();
    runSearch();
  });
}

void ChatController::undoDelete() {
  if (m_undoId == 0) return;
  const qint64 id = m_undoId;
  m_undoId = 0;
  m_undoText.clear();
  m_undoTimer.stop();
  emit undoChanged();
  m_store->post([id](st::Store& s) { s.restore_conversation(id); }, this, [this] {
    refreshConversations();
    runSearch();
  });
}

void ChatController::openSearchHit(qint64 conversationId, qint64 messageId) {
  if (m_sendPending) return;
  loadMessages(conversationId, messageId);
}

void ChatController::runSearch() {
  const quint64 generation = ++m_searchGeneration;
  const std::string query = m_searchQuery.trimmed().toStdString();
  if (query.empty()) {
    m_searchResults.setHits({});
    return;
  }
  m_store->post(
      [query](st::Store& s) {
        st::SearchOptions options;
        options.open_mark = SearchResultModel::kOpenMark;
        options.close_mark = SearchResultModel::kCloseMark;
        return s.search(query, options);
      },
      this, [this, generation](std::vector<st::SearchHit> hits) {
        if (generation == m_searchGeneration) m_searchResults.setHits(std::move(hits));
      });
}

void ChatController::backupHistory() { m_store->backup(); }

void ChatController::setNotice(const QString& text) {
  m_notice = text;
  emit noticeChanged();
}

void ChatController::clearNotice() { setNotice({}); }

QUrl ChatController::documentsFolder() const {
  QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (dir.isEmpty() || !QFileInfo(dir).isDir()) dir = QDir::homePath();
  return QUrl::fromLocalFile(dir);
}

QString ChatController::exportFileName(qint64 id, const QString& format) const {
  QString name = m_conversations.titleOf(id).simplified();
  // Characters that some file system or shell treats specially become '-'.
  for (QChar& c : name)
    if (c.unicode() < 0x20 || QStringLiteral("/\\:*?\"<>|").contains(c)) c = QLatin1Char('-');
  while (name.startsWith(QLatin1Char('.')) || name.startsWith(QLatin1Char('-'))) name.remove(0, 1);
  if (name.size() > 80) name = name.left(80).trimmed();
  if (name.isEmpty()) name = QStringLiteral("chat");
  return name + (format == QLatin1String("json") ? QStringLiteral(".json") : QStringLiteral(".md"));
}

QUrl ChatController::suggestedExportFile(qint64 id, const QString& format) const {
  return QUrl::fromLocalFile(QDir(documentsFolder().toLocalFile()).filePath(exportFileName(id, format)));
}

void ChatController::exportConversation(qint64 id, const QString& file, const QString& format) {
  const QString path = localPath(file);
  const bool json = format == QLatin1String("json");
  if (id == 0 || path.isEmpty() || (!json && format != QLatin1String("markdown"))) {
    const QString message = tr("There is no chat to export yet.");
    setNotice(message);
    emit exportFinished(false, path, message);
    return;
  }
  m_store->post([id, path, json](st::Store& s) { return exportTo(s, id, path, json); }, this,
                [this, path](FileOutcome r) {
                  const QString name = QFileInfo(path).fileName();
                  const QString message = r.problem == FileProblem::none
                                              ? tr("Saved the chat to %1").arg(QDir::toNativeSeparators(path))
                                          : r.problem == FileProblem::unreadable
                                              ? tr("Could not write %1: %2").arg(name, r.detail)
                                              : tr("Could not export the chat: %1").arg(r.detail);
                  setNotice(message);
                  emit exportFinished(r.problem == FileProblem::none, path, message);
                });
}

void ChatController::importConversation(const QString& file) {
  const QString path = localPath(file);
  const QString name = QFileInfo(path).fileName();
  if (m_readOnly) {
    const QString message = tr("The history is read-only, so nothing can be imported into it.");
    setNotice(message);
    emit importFinished(false, 0, message);
    return;
  }
  m_store->post([path](st::Store& s) { return importFrom(s, path, kMaxImportBytes); }, this,
                [this, name](FileOutcome r) {
                  QString message;
                  switch (r.problem) {
                    case FileProblem::none:
                      message = tr("Imported “%1”").arg(r.title.isEmpty() ? tr("Untitled chat") : r.title);
                      break;
                    case FileProblem::unreadable:
                      message = tr("Could not read %1: %2").arg(name, r.detail);
                      break;
                    case FileProblem::tooLarge:
                      message = tr("%1 is too large to be a chat exported by Alap. Nothing was imported.").arg(name);
                      break;
                    case FileProblem::notJson:
                    case FileProblem::foreign:
                      message = tr("%1 is not a chat exported by Alap as JSON. Nothing was imported.").arg(name);
                      break;
                    case FileProblem::newer:
                      message = tr("%1 was exported by a newer version of Alap. Update Alap to import it; nothing "
                                   "was imported.").arg(name);
                      break;
                    case FileProblem::invalid:
                      message = tr("%1 is damaged, so nothing was imported (%2).").arg(name, r.detail);
                      break;
                    case FileProblem::failed:
                      message = tr("Could not import %1: %2").arg(name, r.detail);
                      break;
                  }
                  setNotice(message);
                  refreshConversations();
                  if (r.problem == FileProblem::none && !m_sendPending) loadMessages(r.conversation);
                  emit importFinished(r.problem == FileProblem::none, r.conversation, message);
                });
}

QString ChatController::bengaliInstruction() {
  return QStringLiteral(u"\u09B8\u09AC \u0989\u09A4\u09CD\u09A4\u09B0 \u09AC\u09BE\u0982\u09B2\u09BE\u09AF\u09BC \u09A6\u09BF\u09A8\u0964");
}

void ChatController::setAnswerInBengali(bool on) {
  if (on == m_answerInBengali) return;
  m_answerInBengali = on;
  m_settings->setConversationAnswerInBengali(m_currentId, on);
  emit answerInBengaliChanged();
}

void ChatController::relocalize() {
  emit currentConversationChanged();
  emit canSendChanged();
  refreshConversations();
  runSearch();
  // The stats lines were formatted when the rows were made: format them again.
  if (m_currentId != 0 && !m_sendPending) loadMessages(m_currentId);
}

}  // namespace alap::app
