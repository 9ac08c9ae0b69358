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
  parser.addOption(versionOption);
  parser.addOption(quitAfterOption);
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
  return true;
}

}  // namespace alap::app
