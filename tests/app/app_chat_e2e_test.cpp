// End to end, offscreen: the real window (Main.qml), a message typed with simulated keys, Enter,
// the streamed answer shown, and both messages found in the SQLite file by a second connection —
// once on the FakeEngine (a scripted reply with a code block) and once on the real Engine with a
// tiny GGUF chat model written by the test.
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>
#include <QtTest>

#include "app_context.h"
#include "controllers/chat_controller.h"
#include "controllers/app_settings.h"
#include "core/engine/engine.h"
#include "core/engine/fake_engine.h"
#include "core/store/store.h"
#include "engine/engine_controller.h"
#include "store/store_worker.h"
#include "tests/e2e/tiny_chat_model.h"

Q_IMPORT_QML_PLUGIN(AlapPlugin)

using namespace alap::app;
namespace st = alap::store;

namespace {
// QTest::keyClicks exists only for widgets in Qt 6.4: one simulated key press per character.
void keyClicks(QWindow* window, const QString& text) {
  for (const QChar c : text) QTest::keyClick(window, c.toLatin1());
}

// Delegates have no QObject parent: search the visual tree.
QQuickItem* findItem(QQuickItem* root, const QString& name) {
  if (root->objectName() == name) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}
}  // namespace

class ChatE2eTest : public QObject {
  Q_OBJECT

 private slots:
  void typeSendAndFindInSqlite() {
    QTemporaryDir dir;
    QSettings qsettings(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    alap::FakeEngineScript script;
    script.reply = "আমি ভালো আছি. ```\ncode\n```";
    script.piece_bytes = 3;
    script.piece_delay = std::chrono::milliseconds(2);
    const QString db = dir.filePath(QStringLiteral("history.db"));
    AppContext context(std::make_unique<alap::FakeEngine>(script), &qsettings, db, QLocale::c());

    QQmlApplicationEngine qml;
    qml.addImportPath(QStringLiteral("qrc:/"));
    QVERIFY(context.loadWindow(qml));
    auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().first());
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window));

    auto* input = window->findChild<QQuickItem*>(QStringLiteral("composerInput"));
    QVERIFY(input);
    QVERIFY(window->findChild<QQuickItem*>(QStringLiteral("welcomePage"))->isVisible());

    QSignalSpy loaded(context.engine(), &EngineController::modelLoadedChanged);
    context.engine()->loadModel(dir.filePath(QStringLiteral("tiny.gguf")));
    QVERIFY(loaded.wait(5000));
    QTRY_VERIFY(window->findChild<QQuickItem*>(QStringLiteral("chatView"))->isVisible());

    input->forceActiveFocus();
    QTRY_VERIFY(input->hasActiveFocus());
    QSignalSpy committed(context.chat(), &ChatController::answerCommitted);
    keyClicks(window, QStringLiteral("Hello Alap"));
    QTest::keyClick(window, Qt::Key_Return, Qt::ShiftModifier);  // a new line, not a send
    keyClicks(window, QStringLiteral("how are you?"));
    QCOMPARE(input->property("text").toString(), QStringLiteral("Hello Alap\nhow are you?"));
    QTest::keyClick(window, Qt::Key_Return);
    QVERIFY(committed.wait(10000));
    QCOMPARE(input->property("text").toString(), QString());

    // The streamed answer is shown: the last row's blocks hold the prose and the code block.
    const auto* messages = context.chat()->messages();
    QCOMPARE(messages->rowCount(), 2);
    QCOMPARE(messages->at(1).content, QString::fromStdString(script.reply));
    QCOMPARE(messages->at(1).blocks.size(), 2);
    QTRY_VERIFY(findItem(window->contentItem(), QStringLiteral("copyCodeButton")) != nullptr);

    auto store = st::Store::open(db.toStdString());
    const auto conversations = store.list_conversations();
    QCOMPARE(conversations.size(), size_t(1));
    const auto rows = store.list_messages(conversations[0].id);
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[0].content, "Hello Alap\nhow are you?");
    QCOMPARE(rows[1].content, script.reply);
    QCOMPARE(rows[1].status, st::MessageStatus::complete);
  }

  void realEngineTypeSendAndFindInSqlite() {
    QTemporaryDir dir;
    QSettings qsettings(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    const QString model = dir.filePath(QStringLiteral("tiny-chat.gguf"));
    alap::e2e::write_tiny_chat_model(model.toStdString());
    const QString db = dir.filePath(QStringLiteral("history.db"));
    AppContext context(std::make_unique<alap::Engine>(), &qsettings, db, QLocale::c());
    context.settings()->setMaxTokens(24);

    QQmlApplicationEngine qml;
    qml.addImportPath(QStringLiteral("qrc:/"));
    QVERIFY(context.loadWindow(qml));
    auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().first());
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window));

    QSignalSpy loaded(context.engine(), &EngineController::modelLoadedChanged);
    context.engine()->loadModel(model);
    QVERIFY(loaded.wait(10000));
    QTRY_VERIFY(window->findChild<QQuickItem*>(QStringLiteral("chatView"))->isVisible());

    auto* input = window->findChild<QQuickItem*>(QStringLiteral("composerInput"));
    QVERIFY(input);
    input->forceActiveFocus();
    QTRY_VERIFY(input->hasActiveFocus());
    QSignalSpy committed(context.chat(), &ChatController::answerCommitted);
    keyClicks(window, QStringLiteral("hello tiny model"));
    QTest::keyClick(window, Qt::Key_Return);
    QVERIFY(committed.wait(20000));

    // The real engine streamed a (gibberish, deterministic) answer of up to 24 tokens.
    const auto* messages = context.chat()->messages();
    QCOMPARE(messages->rowCount(), 2);
    const QString answer = messages->at(1).content;
    QVERIFY2(!answer.isEmpty(), "the real engine produced no text");

    auto store = st::Store::open(db.toStdString());
    const auto conversations = store.list_conversations();
    QCOMPARE(conversations.size(), size_t(1));
    const auto rows = store.list_messages(conversations[0].id);
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[0].content, "hello tiny model");
    QCOMPARE(QString::fromStdString(rows[1].content), answer);
    QCOMPARE(rows[1].status, st::MessageStatus::complete);
    QVERIFY(rows[1].model.find("tiny") != std::string::npos);
  }
};

QTEST_MAIN(ChatE2eTest)
#include "app_chat_e2e_test.moc"
