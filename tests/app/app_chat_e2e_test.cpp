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
#include "controllers/quality_check.h"
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

 private:
  QTemporaryDir m_home;  // HOME for the run: the export dialog's documents folder is inside it

 private slots:
  void initTestCase() {
    QVERIFY(m_home.isValid());
    qputenv("HOME", m_home.path().toUtf8());
    qunsetenv("XDG_DOCUMENTS_DIR");
    qputenv("XDG_CONFIG_HOME", m_home.filePath(QStringLiteral(".config")).toUtf8());
  }

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

    // Export from the header through the window's save dialog, then import the file back through
    // the sidebar's open dialog: a second conversation, selected, with the same two messages.
    auto* exportButton = window->findChild<QQuickItem*>(QStringLiteral("exportButton"));
    QVERIFY(exportButton);
    QTRY_VERIFY(exportButton->isVisible());
    QVERIFY(window->findChild<QQuickItem*>(QStringLiteral("importButton"))->isEnabled());
    QSignalSpy exported(context.chat(), &ChatController::exportFinished);
    QMetaObject::invokeMethod(window, "exportChat", Q_ARG(QVariant, QVariant(double(context.chat()->currentConversationId()))),
                              Q_ARG(QVariant, QVariant(QStringLiteral("json"))));
    auto* exportDialog = window->findChild<QObject*>(QStringLiteral("exportDialog"));
    QVERIFY(exportDialog);
    // The dialog proposes <documents>/<title>.json; HOME is this test's folder (initTestCase).
    const QString file = QDir(context.chat()->documentsFolder().toLocalFile()).filePath(QStringLiteral("Hello Alap.json"));
    QVERIFY2(file.startsWith(m_home.path()), qPrintable(file));
    QCOMPARE(exportDialog->property("selectedFile").toUrl().toLocalFile(), file);
    QVERIFY(QMetaObject::invokeMethod(exportDialog, "accept"));
    QVERIFY(exported.wait(5000));
    QCOMPARE(exported.at(0).at(0).toBool(), true);
    QVERIFY(QFile::exists(file));

    QSignalSpy imported(context.chat(), &ChatController::importFinished);
    auto* importDialog = window->findChild<QObject*>(QStringLiteral("importDialog"));
    QVERIFY(importDialog);
    importDialog->setProperty("selectedFile", QUrl::fromLocalFile(file));  // as if chosen in the dialog
    QMetaObject::invokeMethod(window, "importChat");
    QVERIFY(QMetaObject::invokeMethod(importDialog, "accept"));
    QVERIFY(imported.wait(5000));
    QCOMPARE(imported.at(0).at(0).toBool(), true);
    const qint64 importedId = imported.at(0).at(1).toLongLong();
    QTRY_COMPARE(context.chat()->currentConversationId(), importedId);
    QCOMPARE(st::Store::open(db.toStdString()).list_messages(importedId).size(), size_t(2));
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

    // A message typed while quality checks run: the composer's note says that it waits; then it
    // is answered and the note goes away.
    auto* note = window->findChild<QQuickItem*>(QStringLiteral("waitingNote"));
    QVERIFY(note);
    QVERIFY(!note->isVisible());
    for (int i = 0; i < 8; ++i) context.engine()->checkQuality(QualityCheck::sampleText(QStringLiteral("en")));
    keyClicks(window, QStringLiteral("and now?"));
    QTest::keyClick(window, Qt::Key_Return);
    QTRY_VERIFY(note->isVisible());
    // Meanwhile a damaged file is imported: the notice says so (the store thread is free).
    QFile broken(dir.filePath(QStringLiteral("damaged-export-from-another-machine.json")));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write(R"({"format":"alap-conversation","version":1,"title":"x","messages":[{"role":"wizard","content":"?"}]})");
    broken.close();
    QSignalSpy imported(context.chat(), &ChatController::importFinished);
    context.chat()->importConversation(broken.fileName());
    QVERIFY(imported.wait(5000));
    QCOMPARE(imported.at(0).at(0).toBool(), false);
    QVERIFY(context.chat()->notice().contains(QStringLiteral("is damaged, so nothing was imported")));
    QVERIFY(committed.wait(30000));
    QCOMPARE(committed.last().at(1).toString(), QStringLiteral("complete"));
    QTRY_VERIFY(!note->isVisible());
    QCOMPARE(messages->rowCount(), 4);
  }
};

QTEST_MAIN(ChatE2eTest)
#include "app_chat_e2e_test.moc"
