// Offscreen, the real window (Main.qml) on the FakeEngine: the Models page opens with Ctrl+L's
// openModels(), lists a valid GGUF with its figures and an invalid one with "Cannot run", shows
// the embedded catalog with its Bengali badges, and every tab renders without a QML warning.
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>
#include <QtTest>

#include "app_context.h"
#include "controllers/app_settings.h"
#include "core/engine/fake_engine.h"
#include "tests/e2e/tiny_chat_model.h"

Q_IMPORT_QML_PLUGIN(AlapPlugin)

using namespace alap::app;

namespace {

QStringList g_warnings;
QtMessageHandler g_previous = nullptr;

void collect(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (type != QtDebugMsg && type != QtInfoMsg && message.contains(QLatin1String("qml"), Qt::CaseInsensitive)) {
    g_warnings << message;
  }
  if (g_previous) g_previous(type, context, message);
}

void findAll(QQuickItem* root, const QString& name, QList<QQuickItem*>& out) {
  if (root->objectName() == name) out << root;
  for (QQuickItem* child : root->childItems()) findAll(child, name, out);
}

QList<QQuickItem*> findAll(QQuickItem* root, const QString& name) {
  QList<QQuickItem*> out;
  findAll(root, name, out);
  return out;
}

}  // namespace

class ModelsPageTest : public QObject {
  Q_OBJECT

 private slots:
  void opensAndListsInstalledAndCatalog() {
    QTemporaryDir dir;
    const QString models = dir.filePath(QStringLiteral("models"));
    QVERIFY(QDir().mkpath(models));
    alap::e2e::write_tiny_chat_model((models + QStringLiteral("/tiny-chat.gguf")).toStdString());
    QFile junk(models + QStringLiteral("/junk.gguf"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("this is not a GGUF file at all");
    junk.close();

    QSettings qsettings(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    qsettings.setValue(QStringLiteral("models/folder"), models);
    g_previous = qInstallMessageHandler(collect);
    AppContext context(std::make_unique<alap::FakeEngine>(), &qsettings, dir.filePath(QStringLiteral("h.db")),
                       QLocale::c());
    QCOMPARE(context.settings()->modelsFolder(), models);
    QQmlApplicationEngine qml;
    qml.addImportPath(QStringLiteral("qrc:/"));
    QVERIFY(context.loadWindow(qml));
    auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().first());
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window));
    QVERIFY(QMetaObject::invokeMethod(window, "openModels"));
    QObject* page = window->findChild<QObject*>(QStringLiteral("modelsPage"));
    QVERIFY(page);
    QTRY_VERIFY(page->property("opened").toBool());
    // A popup's items live under its contentItem, not under the window's content.
    auto* overlay = qobject_cast<QQuickItem*>(page->property("contentItem").value<QObject*>());
    QVERIFY(overlay);

    // Installed: both files, the junk one with its reason.
    QTRY_COMPARE_WITH_TIMEOUT(findAll(overlay, QStringLiteral("cannotRun")).size(), 2, 5000);
    int visibleReasons = 0;
    for (QQuickItem* r : findAll(overlay, QStringLiteral("cannotRun"))) {
      if (r->isVisible()) {
        ++visibleReasons;
        QVERIFY2(r->property("text").toString().startsWith(QStringLiteral("Cannot run: ")),
                 qPrintable(r->property("text").toString()));
      }
    }
    QCOMPARE(visibleReasons, 1);

    // Every tab renders; the catalog has downloads and at least one Bengali badge.
    const QList<QQuickItem*> found = findAll(overlay, QStringLiteral("modelsTabs"));
    QCOMPARE(found.size(), 1);
    QQuickItem* tabs = found.first();
    for (int i = 0; i < 6; ++i) {
      tabs->setProperty("currentIndex", i);
      QTest::qWait(50);
    }
    tabs->setProperty("currentIndex", 1);
    QTRY_VERIFY(!findAll(overlay, QStringLiteral("catalogDownload")).isEmpty());
    bool bengali = false;
    for (QQuickItem* b : findAll(overlay, QStringLiteral("bengaliBadge"))) bengali = bengali || b->isVisible();
    QVERIFY(bengali);
    qInstallMessageHandler(g_previous);
    QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join(QLatin1Char('\n'))));
  }
};

QTEST_MAIN(ModelsPageTest)
#include "app_models_page_test.moc"
