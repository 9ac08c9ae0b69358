#include "app_options.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTextStream>

#include "alap/version.h"

namespace alap::app {

bool parseAppOptions(const QStringList& arguments, AppOptions& options, int& exitCode) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QCoreApplication::translate("main", "Offline chat with local language models"));
  parser.addHelpOption();
  QCommandLineOption versionOption(QStringList{QStringLiteral("v"), QStringLiteral("version")},
                                   QCoreApplication::translate("main", "Print the version and exit."));
  QCommandLineOption quitAfterOption(QStringLiteral("quit-after"),
                                     QCoreApplication::translate("main", "Quit after this many milliseconds (for tests)."),
                                     QStringLiteral("ms"));
  QCommandLineOption langOption(QStringLiteral("lang"),
                                QCoreApplication::translate("main", "Interface language (bn or en)."),
                                QStringLiteral("code"));
  QCommandLineOption databaseOption(QStringLiteral("database"),
                                    QCoreApplication::translate("main", "The history database file."),
                                    QStringLiteral("file"));
  QCommandLineOption modelOption(QStringLiteral("model"),
                                 QCoreApplication::translate("main", "Load this GGUF model at start."),
                                 QStringLiteral("file"));
  parser.addOption(versionOption);
  parser.addOption(quitAfterOption);
  parser.addOption(langOption);
  parser.addOption(databaseOption);
  parser.addOption(modelOption);
  if (!parser.parse(arguments)) {
    QTextStream(stderr) << parser.errorText() << '\n';
    exitCode = 2;
    return false;
  }
  if (parser.isSet(QStringLiteral("help"))) {
    QTextStream(stdout) << parser.helpText();
    exitCode = 0;
    return false;
  }
  if (parser.isSet(versionOption)) {
    QTextStream(stdout) << "alap " << ALAP_VERSION_STRING << '\n';
    exitCode = 0;
    return false;
  }
  if (parser.isSet(quitAfterOption)) {
    bool ok = false;
    options.quitAfterMs = parser.value(quitAfterOption).toInt(&ok);
    if (!ok || options.quitAfterMs <= 0) {
      QTextStream(stderr) << "alap: --quit-after needs a positive number of milliseconds\n";
      exitCode = 2;
      return false;
    }
  }
  options.language = parser.value(langOption);
  options.databasePath = parser.value(databaseOption);
  options.modelPath = parser.value(modelOption);
  return true;
}

}  // namespace alap::app
