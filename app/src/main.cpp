// The alap executable: parses options, loads translations, creates the window. Thin by design;
// everything it shows lives in alap_app so tests can build the same objects.
#include <QGuiApplication>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QTextStream>
#include <QTimer>
#include <QTranslator>
#include <QtQml/QQmlExtensionPlugin>

#include "alap/version.h"
#include "app_options.h"

Q_IMPORT_QML_PLUGIN(AlapPlugin)

int main(int argc, char* argv[]) {
  // --version must work without a display, so parse before creating the GUI application.
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  alap::app::AppOptions options;
  {
    QCoreApplication probe(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("alap"));
    QCoreApplication::setApplicationVersion(QStringLiteral(ALAP_VERSION_STRING));
    int exitCode = 0;
    if (!alap::app::parseAppOptions(arguments, options, exitCode)) return exitCode;
  }

  QGuiApplication app(argc, argv);
  QGuiApplication::setApplicationName(QStringLiteral("alap"));
  QGuiApplication::setApplicationDisplayName(QStringLiteral("Alap"));
  QGuiApplication::setOrganizationName(QStringLiteral("Alap"));
  QGuiApplication::setApplicationVersion(QStringLiteral(ALAP_VERSION_STRING));
  QGuiApplication::setDesktopFileName(QStringLiteral("org.alap.Alap"));

  QTranslator translator;
  if (translator.load(QLocale(), QStringLiteral("alap"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
    QCoreApplication::installTranslator(&translator);
  }

  QQmlApplicationEngine engine;
  QObject::connect(
      &engine, &QQmlApplicationEngine::objectCreationFailed, &app, [] { QCoreApplication::exit(1); },
      Qt::QueuedConnection);
  engine.load(QUrl(QStringLiteral("qrc:/Alap/qml/Main.qml")));
  if (engine.rootObjects().isEmpty()) return 1;

  if (auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first())) {
    QObject::connect(window, &QQuickWindow::frameSwapped, &app, [window] {
      static bool once = false;
      if (!once) {
        once = true;
        QTextStream(stdout) << "alap: window shown: " << window->title() << '\n';
      }
    });
  }
  if (options.quitAfterMs > 0) QTimer::singleShot(options.quitAfterMs, &app, &QCoreApplication::quit);
  return app.exec();
}
