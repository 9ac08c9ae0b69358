// Qt Quick Test runner for the tst_*.qml files in tests/app/qml, with Alap's QML module linked in
// statically and reachable as `import Alap`.
#include <QObject>
#include <QQmlEngine>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest/quicktest.h>

Q_IMPORT_QML_PLUGIN(AlapPlugin)

class Setup : public QObject {
  Q_OBJECT
 public slots:
  void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/")); }
};

QUICK_TEST_MAIN_WITH_SETUP(alap, Setup)

#include "qml_test_main.moc"
