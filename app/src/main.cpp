// The alap executable: parses options, picks the language, builds the AppContext with the real
// engine and the history database, and shows the window. Thin by design; everything it shows
// lives in alap_app so tests build the same objects.
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QSettings>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>
#include <QtQml/QQmlExtensionPlugin>

#include "alap/version.h"
#include "app_context.h"
#include "app_options.h"
#include "remote/backend_controller.h"
#include "controllers/app_settings.h"
#include "core/engine/engine.h"
#include "engine/engine_controller.h"

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

  // The system locale picks the language on first start; AppContext's Localizer installs the
  // translation and switches it at run time. --lang overrides it for this run only.
  const QLocale locale;

  QString database = options.databasePath;
  if (database.isEmpty()) {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(dir);
    database = dir + QStringLiteral("/history.db");
  }

  QSettings settings;
  alap::app::AppContext context(std::make_unique<alap::Engine>(), &settings, database, locale);
  if (!options.language.isEmpty()) context.settings()->overrideLanguage(alap::app::AppSettings::languageOf(QLocale(options.language)));

  QQmlApplicationEngine engine;
  engine.addImportPath(QStringLiteral("qrc:/"));
  QObject::connect(
      &engine, &QQmlApplicationEngine::objectCreationFailed, &app, [] { QCoreApplication::exit(1); },
      Qt::QueuedConnection);
  if (!context.loadWindow(engine)) return 1;

  if (auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first())) {
    QObject::connect(window, &QQuickWindow::frameSwapped, &app, [window] {
      static bool once = false;
      if (!once) {
        once = true;
        QTextStream(stdout) << "alap: window shown: " << window->title() << '\n';
      }
    });
  }

  // Start usefully: the model named on the command line, else the last one, when it still exists —
  // unless the remote backend was chosen, which reconnects by itself (a local load would replace it).
  const bool remoteChosen = options.modelPath.isEmpty() && context.backend()->remote();
  const QString model = !options.modelPath.isEmpty() ? options.modelPath : context.settings()->lastModelPath();
  if (!remoteChosen && !model.isEmpty() && QFileInfo::exists(model)) context.engine()->loadModel(model);

  if (options.quitAfterMs > 0) QTimer::singleShot(options.quitAfterMs, &app, &QCoreApplication::quit);
  return app.exec();
}
