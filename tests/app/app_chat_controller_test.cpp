// ChatController on the FakeEngine and a real SQLite file: send commits the user's message before
// generation and the answer with its final status; Stop, Regenerate, edit-and-resend, delete with
// undo, and search, each checked in the database itself.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "app_context.h"
#include "controllers/app_settings.h"
#include "controllers/chat_controller.h"
#include "controllers/quality_check.h"
#include "core/engine/engine.h"
#include "tests/e2e/tiny_chat_model.h"
#include "core/engine/fake_engine.h"
#include "core/store/store.h"
#include "engine/engine_controller.h"
#include "store/store_worker.h"

using namespace alap::app;
namespace st = alap::store;

class ChatControllerTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<AppContext> make(const std::string& reply, int delayMs) {
    alap::FakeEngineScript script;
    script.reply = reply;
    script.piece_bytes = 2;
    script.piece_delay = std::chrono::milliseconds(delayMs);
    m_qsettings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    auto context = std::make_unique<AppContext>(std::make_unique<alap::FakeEngine>(script), m_qsettings.get(), dbPath(),
                                                QLocale::c());
    QSignalSpy opened(context->store(), &StoreWorker::opened);
    if (!opened.wait(5000)) return nullptr;
    QSignalSpy loaded(context->engine(), &EngineController::modelLoadedChanged);
    context->engine()->loadModel(QStringLiteral("/models/fake.gguf"));
    if (!loaded.wait(5000)) return nullptr;
    return context;
  }
  QString dbPath() const { return m_dir.filePath(QStringLiteral("history.db")); }
  std::vector<st::Message> stored(st::Id conversation) const {
    return st::Store::open(dbPath().toStdString()).list_messages(conversation);
  }

  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_qsettings;

 private slots:
  void init() { QFile::remove(dbPath()); }

  // A message sent while a quality check runs waits behind it on the engine thread: the composer
  // says why, the answer starts only after the last check finished, and it completes normally.
  void chatSentDuringQualityCheckWaitsForIt() {
    const QString model = m_dir.filePath(QStringLiteral("tiny.gguf"));
    alap::e2e::write_tiny_chat_model(model.toStdString());
    // Its own settings file: the 16-token limit must not reach the other tests.
    m_qsettings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("quality.ini")), QSettings::IniFormat);
    AppContext context(std::make_unique<alap::Engine>(), m_qsettings.get(), dbPath(), QLocale::c());
    context.settings()->setMaxTokens(16);
    QSignalSpy opened(context.store(), &StoreWorker::opened);
    QVERIFY(opened.wait(5000));
    QSignalSpy loaded(context.engine(), &EngineController::modelLoadedChanged);
    context.engine()->loadModel(model);
    QVERIFY(loaded.wait(10000));
    ChatController* chat = context.chat();
    EngineController* engine = context.engine();

    // Events in the order the GUI thread saw them.
    QStringList events;
    int checksDone = 0;
    connect(engine, &EngineController::qualityFinished, this, [&] { events << QStringLiteral("check %1").arg(++checksDone); });
    connect(engine, &EngineController::qualityFailed, this, [&] { events << QStringLiteral("check failed"); });
    connect(engine, &EngineController::generationStarted, this, [&] { events << QStringLiteral("answer started"); });
    QStringList hints;
    connect(chat, &ChatController::canSendChanged, this, [&] { hints << chat->composerHint(); });

    // The window's check, then more queued behind it, so that the engine thread is surely busy
    // when the answer is asked for (a tiny model's check takes a few milliseconds).
    context.quality()->start();
    QVERIFY(context.quality()->running());
    const int kChecks = 8;
    const QString sample = QualityCheck::sampleText(QStringLiteral("en"));
    for (int i = 1; i < kChecks; ++i) engine->checkQuality(sample);
    QVERIFY(engine->checkingQuality());
    QVERIFY(chat->canSend());  // sending is allowed: the message waits
    QSignalSpy committed(chat, &ChatController::answerCommitted);
    QVERIFY(chat->send(QStringLiteral("hello while checking")));
    QTRY_VERIFY(chat->waitingForQualityCheck());
    QVERIFY2(chat->composerHint().contains(QStringLiteral("quality check")), qPrintable(chat->composerHint()));
    QVERIFY(!chat->canSend());
    QVERIFY(committed.wait(30000));

    QCOMPARE(committed.at(0).at(1).toString(), QStringLiteral("complete"));
    QCOMPARE(events.size(), kChecks + 1);
    QCOMPARE(events.last(), QStringLiteral("answer started"));  // after every check
    QCOMPARE(events.at(kChecks - 1), QStringLiteral("check %1").arg(kChecks));
    QVERIFY(!engine->checkingQuality());
    QVERIFY(!chat->waitingForQualityCheck());
    QVERIFY(std::any_of(hints.begin(), hints.end(), [](const QString& h) { return h.contains(QStringLiteral("quality check")); }));
    QCOMPARE(chat->composerHint(), QStringLiteral("Message Alap (Enter sends, Shift+Enter adds a line)"));
    QVERIFY(context.quality()->recommendation() != QString());  // the window's check reported
    const auto rows = stored(chat->currentConversationId());
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[1].status, st::MessageStatus::complete);
    QVERIFY(!rows[1].content.empty());
    QCOMPARE(QString::fromStdString(rows[1].content), chat->messages()->at(1).content);
  }

  // Export to Markdown and JSON on the store thread: the files hold the conversation; a bad target
  // reports failure in words and writes nothing.
  void loadingAModelWithoutAUsableTemplateSaysSo() {
    const QString model = m_dir.filePath(QStringLiteral("notemplate.gguf"));
    alap::test::TinyLlamaOptions plain;
    plain.name = "no-template";  // chat_template empty: no tokenizer.chat_template key
    alap::test::write_tiny_llama_model(model.toStdString(), plain);
    const QString good = m_dir.filePath(QStringLiteral("tiny.gguf"));
    alap::e2e::write_tiny_chat_model(good.toStdString());
    m_qsettings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("notice.ini")), QSettings::IniFormat);
    AppContext context(std::make_unique<alap::Engine>(), m_qsettings.get(), dbPath(), QLocale::c());
    context.settings()->setGpuLayers(0);
    QSignalSpy opened(context.store(), &StoreWorker::opened);
    QVERIFY(opened.wait(5000));
    QSignalSpy loaded(context.engine(), &EngineController::modelLoadedChanged);
    context.engine()->loadModel(good);
    QVERIFY(loaded.wait(10000));
    QCOMPARE(context.chat()->notice(), QString());  // a model with its own template: nothing to say
    context.engine()->loadModel(model);
    QVERIFY(loaded.wait(10000));
    QVERIFY2(context.chat()->notice().contains(QStringLiteral("ChatML")), qPrintable(context.chat()->notice()));
  }

  void exportWritesMarkdownAndJson() {
    auto app = make("The **Padma** and the Jamuna.", 0);
    QVERIFY(app);
    ChatController* chat = app->chat();
    QSignalSpy committed(chat, &ChatController::answerCommitted);
    QVERIFY(chat->send(QStringLiteral("Which rivers? নদী")));
    QVERIFY(committed.wait(5000));
    const qint64 id = chat->currentConversationId();
    QTRY_COMPARE(chat->conversations()->rowCount(), 1);
    QCOMPARE(chat->exportFileName(id, QStringLiteral("markdown")), QStringLiteral("Which rivers- নদী.md"));
    QCOMPARE(chat->exportFileName(id, QStringLiteral("json")), QStringLiteral("Which rivers- নদী.json"));
    QVERIFY(chat->suggestedExportFile(id, QStringLiteral("json")).toLocalFile().endsWith(QStringLiteral("/Which rivers- নদী.json")));

    QSignalSpy exported(chat, &ChatController::exportFinished);
    const QString md = m_dir.filePath(QStringLiteral("chat.md"));
    chat->exportConversation(id, QUrl::fromLocalFile(md).toString(), QStringLiteral("markdown"));
    QVERIFY(exported.wait(5000));
    QCOMPARE(exported.at(0).at(0).toBool(), true);
    QCOMPARE(exported.at(0).at(1).toString(), md);
    QVERIFY(chat->notice().contains(QStringLiteral("chat.md")));
    QFile mdFile(md);
    QVERIFY(mdFile.open(QIODevice::ReadOnly));
    const QString mdText = QString::fromUtf8(mdFile.readAll());
    QCOMPARE(mdText, QString::fromStdString(st::Store::open(dbPath().toStdString()).export_markdown(id)));
    QVERIFY(mdText.contains(QStringLiteral("Which rivers? নদী")));
    QVERIFY(mdText.contains(QStringLiteral("The **Padma** and the Jamuna.")));

    const QString json = m_dir.filePath(QStringLiteral("chat.json"));
    chat->exportConversation(id, json, QStringLiteral("json"));
    QVERIFY(exported.wait(5000));
    QCOMPARE(exported.at(1).at(0).toBool(), true);
    QFile jsonFile(json);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(jsonFile.readAll()).object();
    QCOMPARE(doc.value(QStringLiteral("format")).toString(), QStringLiteral("alap-conversation"));
    QCOMPARE(doc.value(QStringLiteral("version")).toInt(), 1);
    const QJsonArray messages = doc.value(QStringLiteral("messages")).toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].toObject().value(QStringLiteral("content")).toString(), QStringLiteral("Which rivers? নদী"));
    QCOMPARE(messages[1].toObject().value(QStringLiteral("role")).toString(), QStringLiteral("assistant"));
    QCOMPARE(messages[1].toObject().value(QStringLiteral("content")).toString(), QStringLiteral("The **Padma** and the Jamuna."));

    // A folder that does not exist: failure, in words, and no file.
    const QString bad = m_dir.filePath(QStringLiteral("missing/dir/chat.md"));
    chat->exportConversation(id, bad, QStringLiteral("markdown"));
    QVERIFY(exported.wait(5000));
    QCOMPARE(exported.at(2).at(0).toBool(), false);
    QVERIFY2(exported.at(2).at(2).toString().startsWith(QStringLiteral("Could not write chat.md")),
             qPrintable(exported.at(2).at(2).toString()));
    QVERIFY(!QFile::exists(bad));
    chat->exportConversation(0, md, QStringLiteral("markdown"));  // nothing open
    QCOMPARE(exported.size(), 4);
    QCOMPARE(exported.at(3).at(0).toBool(), false);
  }

  // Import: a good export becomes a new, selected conversation; a broken file, a foreign JSON file
  // and a file from a newer Alap each give one clear message and change nothing.
  void importAddsAndSelectsOrChangesNothing() {
    auto app = make("ok", 0);
    QVERIFY(app);
    ChatController* chat = app->chat();
    QSignalSpy imported(chat, &ChatController::importFinished);
    auto write = [&](const char* name, const QByteArray& data) {
      const QString path = m_dir.filePath(QString::fromLatin1(name));
      QFile f(path);
      if (!f.open(QIODevice::WriteOnly)) return QString();
      f.write(data);
      return path;
    };
    const QByteArray good = R"({"format":"alap-conversation","version":1,"title":"চায়ের গল্প","system_prompt":"Be brief.",
      "created_at":1700000000000,"messages":[
        {"role":"user","content":"চা কোথা থেকে এল?","status":"complete","created_at":1700000000001,"model":""},
        {"role":"assistant","content":"From China, via Assam.","status":"complete","created_at":1700000000002,"model":"m"}]})";
    const auto countConversations = [&] { return st::Store::open(dbPath().toStdString()).list_conversations().size(); };

    // Broken JSON (cut short), a foreign JSON file, a newer export, a missing file: nothing changes.
    struct Bad {
      const char* name;
      QByteArray data;
      const char* words;
    };
    const std::vector<Bad> bads{
        {"broken.json", good.left(good.size() / 2), "is not a chat exported by Alap as JSON. Nothing was imported."},
        {"foreign.json", R"({"model":"gpt","messages":[{"role":"user","content":"hi"}]})",
         "is not a chat exported by Alap as JSON. Nothing was imported."},
        {"newer.json", QByteArray(good).replace("\"version\":1", "\"version\":2"),
         "was exported by a newer version of Alap. Update Alap to import it; nothing was imported."},
        {"damaged.json", QByteArray(good).replace("\"role\":\"assistant\"", "\"role\":\"wizard\""),
         "is damaged, so nothing was imported"},
    };
    for (const Bad& bad : bads) {
      const QString path = write(bad.name, bad.data);
      QVERIFY(!path.isEmpty());
      chat->importConversation(QUrl::fromLocalFile(path).toString());
      QVERIFY(imported.wait(5000));
      const QList<QVariant> r = imported.takeLast();
      QCOMPARE(r.at(0).toBool(), false);
      QCOMPARE(r.at(1).toLongLong(), 0);
      const QString message = r.at(2).toString();
      QVERIFY2(message.startsWith(QString::fromLatin1(bad.name) + QLatin1Char(' ') + QString::fromUtf8(bad.words)),
               qPrintable(message));
      QCOMPARE(chat->notice(), message);
      QCOMPARE(countConversations(), size_t(0));
    }
    chat->importConversation(m_dir.filePath(QStringLiteral("absent.json")));
    QVERIFY(imported.wait(5000));
    QCOMPARE(imported.takeLast().at(0).toBool(), false);
    QVERIFY(chat->notice().startsWith(QStringLiteral("Could not read absent.json")));
    QCOMPARE(chat->currentConversationId(), 0);

    // The good file: a new conversation with both messages, opened in the window.
    chat->importConversation(write("good.json", good));
    QVERIFY(imported.wait(5000));
    const QList<QVariant> r = imported.takeLast();
    QCOMPARE(r.at(0).toBool(), true);
    const qint64 id = r.at(1).toLongLong();
    QVERIFY(id != 0);
    QCOMPARE(r.at(2).toString(), QStringLiteral("Imported “চায়ের গল্প”"));
    QTRY_COMPARE(chat->currentConversationId(), id);
    QCOMPARE(chat->currentTitle(), QStringLiteral("চায়ের গল্প"));
    QCOMPARE(chat->systemPrompt(), QStringLiteral("Be brief."));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(chat->messages()->at(0).content, QStringLiteral("চা কোথা থেকে এল?"));
    QCOMPARE(chat->messages()->at(1).content, QStringLiteral("From China, via Assam."));
    QTRY_COMPARE(chat->conversations()->rowCount(), 1);
    const auto rows = stored(id);
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[1].role, "assistant");
    QCOMPARE(countConversations(), size_t(1));
  }

  void sendCommitsBothMessages() {
    auto app = make("Hello **there**.", 0);
    QVERIFY(app);
    ChatController* chat = app->chat();
    QVERIFY(chat->canSend());
    QVERIFY(!chat->send(QStringLiteral("   ")));
    QSignalSpy committed(chat, &ChatController::answerCommitted);
    QVERIFY(chat->send(QStringLiteral("নমস্কার, how are you?")));
    QVERIFY(!chat->canSend());  // one answer at a time
    QVERIFY(committed.wait(5000));
    QCOMPARE(committed.at(0).at(1).toString(), QStringLiteral("complete"));
    QVERIFY(chat->currentConversationId() != 0);
    const auto rows = stored(chat->currentConversationId());
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[0].role, "user");
    QCOMPARE(rows[0].content, "নমস্কার, how are you?");
    QCOMPARE(rows[1].content, "Hello **there**.");
    QCOMPARE(rows[1].status, st::MessageStatus::complete);
    QCOMPARE(rows[1].model, "fake fake.gguf");
    QVERIFY(QString::fromStdString(rows[1].stats_json).contains(QStringLiteral("\"tokens\":8")));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QVERIFY(!chat->messages()->at(1).statsText.isEmpty());
    QTRY_COMPARE(chat->conversations()->rowCount(), 1);
    QCOMPARE(chat->conversations()->titleOf(chat->currentConversationId()), QStringLiteral("নমস্কার, how are you?"));
  }

  void stopKeepsThePartialAnswer() {
    auto app = make(std::string(4000, 'z'), 2);
    QVERIFY(app);
    ChatController* chat = app->chat();
    QSignalSpy committed(chat, &ChatController::answerCommitted);
    QVERIFY(chat->send(QStringLiteral("Write a lot")));
    QTRY_VERIFY_WITH_TIMEOUT(chat->messages()->rowCount() == 2 && chat->messages()->at(1).content.size() >= 10, 5000);
    chat->stop();
    QVERIFY(committed.wait(5000));
    QCOMPARE(committed.at(0).at(1).toString(), QStringLiteral("stopped"));
    const auto rows = stored(chat->currentConversationId());
    QCOMPARE(rows[1].status, st::MessageStatus::stopped);
    QVERIFY(rows[1].content.size() >= 10 && rows[1].content.size() < 4000);
    QCOMPARE(QString::fromStdString(rows[1].content), chat->messages()->at(1).content);
  }

  void regenerateAndEditReplaceLaterMessages() {
    auto app = make("Answer.", 0);
    QVERIFY(app);
    ChatController* chat = app->chat();
    QSignalSpy committed(chat, &ChatController::answerCommitted);
    QVERIFY(chat->send(QStringLiteral("First")));
    QVERIFY(committed.wait(5000));
    QVERIFY(chat->send(QStringLiteral("Second")));
    QVERIFY(committed.wait(5000));
    const qint64 c = chat->currentConversationId();
    QVERIFY(chat->canRegenerate());
    chat->regenerate();
    QVERIFY(committed.wait(5000));
    auto rows = stored(c);
    QCOMPARE(rows.size(), size_t(4));
    QCOMPARE(committed.size(), 3);
    QCOMPARE(rows[2].content, "Second");
    QCOMPARE(rows[3].status, st::MessageStatus::complete);

    QVERIFY(chat->editAndResend(0, QStringLiteral("First, edited")));
    QVERIFY(committed.wait(5000));
    rows = stored(c);
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[0].content, "First, edited");
    QCOMPARE(rows[1].content, "Answer.");
    QCOMPARE(chat->messages()->rowCount(), 2);
  }

  void deleteUndoAndSearch() {
    auto app = make("চা না কফি?", 0);
    QVERIFY(app);
    ChatController* chat = app->chat();
    QSignalSpy committed(chat, &ChatController::answerCommitted);
    QVERIFY(chat->send(QStringLiteral("বাংলায় বলো")));
    QVERIFY(committed.wait(5000));
    const qint64 c = chat->currentConversationId();

    chat->setSearchQuery(QStringLiteral("কফি"));
    QTRY_COMPARE_WITH_TIMEOUT(chat->searchResults()->rowCount(), 1, 5000);

    chat->deleteConversation(c);
    QTRY_VERIFY_WITH_TIMEOUT(chat->undoAvailable(), 5000);
    QTRY_COMPARE(chat->conversations()->rowCount(), 0);
    QCOMPARE(chat->currentConversationId(), 0);
    QTRY_COMPARE(chat->searchResults()->rowCount(), 0);
    chat->undoDelete();
    QTRY_COMPARE(chat->conversations()->rowCount(), 1);
    QTRY_COMPARE(chat->searchResults()->rowCount(), 1);
    chat->selectConversation(c);
    QTRY_COMPARE(chat->messages()->rowCount(), 2);
  }

  void noModelMeansNoSend() {
    m_qsettings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("s2.ini")), QSettings::IniFormat);
    AppContext app(std::make_unique<alap::FakeEngine>(), m_qsettings.get(), dbPath(), QLocale::c());
    QVERIFY(!app.chat()->canSend());
    QVERIFY(!app.chat()->send(QStringLiteral("hello")));
    QVERIFY(app.chat()->composerHint().contains(QStringLiteral("Load a model")));
  }
};

QTEST_MAIN(ChatControllerTest)
#include "app_chat_controller_test.moc"
