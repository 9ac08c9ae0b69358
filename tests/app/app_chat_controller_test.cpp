// ChatController on the FakeEngine and a real SQLite file: send commits the user's message before
// generation and the answer with its final status; Stop, Regenerate, edit-and-resend, delete with
// undo, and search, each checked in the database itself.
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app_context.h"
#include "controllers/chat_controller.h"
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
