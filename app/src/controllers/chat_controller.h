// ChatController: the chat's decisions. Send (the user's message is committed before generation
// starts), stream the answer into the message model, commit it with its final status and stats;
// Stop, Regenerate, edit-and-resend, copy; conversations (new, select, rename, pin, delete with
// undo, export to Markdown or JSON, import from JSON) and full-text search. Talks to the engine through EngineController and to SQLite through
// StoreWorker; never waits for either. Not a view: QML binds to its properties and models.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>
#include <QUrl>
#include <QtQml/qqmlregistration.h>
#include <functional>

#include "models/conversation_list_model.h"
#include "models/message_list_model.h"
#include "models/search_result_model.h"

namespace alap::app {

class AppSettings;
class EngineController;
class MemoryMeter;
class StoreWorker;
struct AnswerStats;
struct MemorySample;

class ChatController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("ChatController is created by the application")

  Q_PROPERTY(alap::app::ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(alap::app::MessageListModel* messages READ messages CONSTANT)
  Q_PROPERTY(alap::app::SearchResultModel* searchResults READ searchResults CONSTANT)
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentConversationChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentConversationChanged)
  Q_PROPERTY(bool hasConversation READ hasConversation NOTIFY currentConversationChanged)
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY systemPromptChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(bool canSend READ canSend NOTIFY canSendChanged)
  Q_PROPERTY(QString composerHint READ composerHint NOTIFY canSendChanged)
  Q_PROPERTY(bool canRegenerate READ canRegenerate NOTIFY canSendChanged)
  Q_PROPERTY(QString searchQuery READ searchQuery WRITE setSearchQuery NOTIFY searchQueryChanged)
  Q_PROPERTY(bool undoAvailable READ undoAvailable NOTIFY undoChanged)
  Q_PROPERTY(QString undoText READ undoText NOTIFY undoChanged)
  Q_PROPERTY(bool historyReadOnly READ historyReadOnly NOTIFY historyStateChanged)
  Q_PROPERTY(QString historyMessage READ historyMessage NOTIFY historyStateChanged)
  Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
  // "Answer in Bengali" for the open conversation (new ones start from AppSettings::answerInBengali).
  Q_PROPERTY(bool answerInBengali READ answerInBengali WRITE setAnswerInBengali NOTIFY answerInBengaliChanged)
  // The answer was asked for but waits on the engine thread for a quality check to finish.
  Q_PROPERTY(bool waitingForQualityCheck READ waitingForQualityCheck NOTIFY canSendChanged)
  // Where the export and import file dialogs open first (a file: URL of the documents folder).
  Q_PROPERTY(QUrl documentsFolder READ documentsFolder CONSTANT)

 public:
  static constexpr int kUndoMs = 8000;
  static constexpr int kCheckpointMs = 2000;  // a streaming answer is saved this often
  static constexpr int kSearchDelayMs = 150;
  // An import larger than this is refused before it is read (exports of real chats are far smaller).
  static constexpr qint64 kMaxImportBytes = 64LL * 1024 * 1024;
  // Added to the system prompt when "answer in Bengali" is on ("Give every answer in Bengali.").
  static QString bengaliInstruction();

  using CopyFunction = std::function<void(const QString&)>;

  ChatController(EngineController* engine, StoreWorker* store, AppSettings* settings, MemoryMeter* meter,
                 CopyFunction copy, QObject* parent = nullptr);

  ConversationListModel* conversations() { return &m_conversations; }
  MessageListModel* messages() { return &m_messages; }
  SearchResultModel* searchResults() { return &m_searchResults; }
  qint64 currentConversationId() const { return m_currentId; }
  bool hasConversation() const { return m_currentId != 0; }
  QString currentTitle() const;
  QString systemPrompt() const { return m_systemPrompt; }
  void setSystemPrompt(const QString& prompt);
  bool generating() const { return m_genJob != 0; }
  bool canSend() const;
  QString composerHint() const;
  bool canRegenerate() const;
  QString searchQuery() const { return m_searchQuery; }
  void setSearchQuery(const QString& query);
  bool undoAvailable() const { return m_undoId != 0; }
  QString undoText() const { return m_undoText; }
  bool historyReadOnly() const { return m_readOnly; }
  QString historyMessage() const { return m_historyMessage; }
  QString notice() const { return m_notice; }
  bool answerInBengali() const { return m_answerInBengali; }
  void setAnswerInBengali(bool on);
  // After a language switch: every text formatted here or in the models, again.
  void relocalize();
  bool waitingForQualityCheck() const;
  QUrl documentsFolder() const;

  Q_INVOKABLE void refreshConversations();
  Q_INVOKABLE void newConversation();
  Q_INVOKABLE void selectConversation(qint64 id);
  Q_INVOKABLE bool send(const QString& text);
  Q_INVOKABLE void stop();
  Q_INVOKABLE void regenerate();
  Q_INVOKABLE bool editAndResend(int row, const QString& text);
  Q_INVOKABLE void copyMessage(int row);
  Q_INVOKABLE void copyText(const QString& text);
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void setPinned(qint64 id, bool pinned);
  Q_INVOKABLE void deleteConversation(qint64 id);
  Q_INVOKABLE void undoDelete();
  Q_INVOKABLE void openSearchHit(qint64 conversationId, qint64 messageId);
  Q_INVOKABLE void backupHistory();
  Q_INVOKABLE void clearNotice();
  // A file name for exporting conversation `id` ("markdown" -> "<title>.md", "json" -> "<title>.json"),
  // the title made safe for every file system.
  Q_INVOKABLE QString exportFileName(qint64 id, const QString& format) const;
  // documentsFolder/exportFileName(id, format): what the save dialog proposes.
  Q_INVOKABLE QUrl suggestedExportFile(qint64 id, const QString& format) const;
  // Writes conversation `id` as Markdown or JSON ("markdown" or "json") to `file` (a path or a
  // file: URL), atomically, on the store thread; exportFinished and a notice report the outcome.
  Q_INVOKABLE void exportConversation(qint64 id, const QString& file, const QString& format);
  // Reads an Alap JSON export on the store thread and adds it as a new conversation, which is then
  // opened. A file that is not such an export, or is damaged, changes nothing and says why.
  Q_INVOKABLE void importConversation(const QString& file);

 signals:
  void currentConversationChanged();
  void systemPromptChanged();
  void generatingChanged();
  void canSendChanged();
  void searchQueryChanged();
  void undoChanged();
  void historyStateChanged();
  void noticeChanged();
  void answerInBengaliChanged();
  void scrollToRow(int row);
  // The answer was committed to the store with its final status (tests and screenshots wait on it).
  void answerCommitted(qint64 messageId, const QString& status);
  // Outcome of exportConversation/importConversation; `message` is the notice shown.
  void exportFinished(bool ok, const QString& path, const QString& message);
  void importFinished(bool ok, qint64 conversationId, const QString& message);

 private:
  void startAnswer(qint64 conversationId, qint64 assistantId);
  void onTokens(quint64 job, const QString& text, const QList<MemorySample>& samples);
  void onFinished(quint64 job, const QString& text, const AnswerStats& stats);
  void onFailed(quint64 job, const QString& message, const QString& partial);
  void commitAnswer(const QString& status, const QString& statsJson, const QString& errorText);
  void loadMessages(qint64 id, qint64 scrollToMessageId = 0);
  void runSearch();
  void setNotice(const QString& text);
  void setCurrent(qint64 id, const QString& systemPrompt);
  int streamingRow() const;

  EngineController* m_engine;
  StoreWorker* m_store;
  AppSettings* m_settings;
  MemoryMeter* m_meter;
  CopyFunction m_copy;

  ConversationListModel m_conversations;
  MessageListModel m_messages;
  SearchResultModel m_searchResults;

  qint64 m_currentId = 0;
  QString m_systemPrompt;
  bool m_sendPending = false;  // a send waits for its store commit
  bool m_stopRequested = false;

  // The answer being generated (it may belong to another conversation than the open one).
  quint64 m_genJob = 0;
  bool m_genStarted = false;  // the engine thread began m_genJob (it may wait behind a quality check)
  qint64 m_genConversationId = 0;
  qint64 m_genMessageId = 0;
  QString m_genText;
  QTimer m_checkpoint;

  QString m_searchQuery;
  QTimer m_searchTimer;
  quint64 m_searchGeneration = 0;

  qint64 m_undoId = 0;
  QString m_undoText;
  QTimer m_undoTimer;

  bool m_readOnly = false;
  QString m_historyMessage;
  QString m_notice;
  bool m_answerInBengali = false;
};

}  // namespace alap::app
