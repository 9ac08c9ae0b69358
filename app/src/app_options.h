// Command-line options of the alap executable (--version, --help, test hooks).
// Parsed with QCommandLineParser; no window is created here.
#pragma once

#include <QString>
#include <QStringList>

namespace alap::app {

struct AppOptions {
  bool showVersion = false;
  int quitAfterMs = -1;  // > 0: quit this long after the window is shown (tests)
  QString language;      // --lang bn|en: the interface language (default: the system's)
  QString databasePath;  // --database FILE: the history (default: AppDataLocation/history.db)
  QString modelPath;     // --model FILE.gguf: load this model at start
};

// Parses arguments; prints help/errors itself. Returns false when the app should exit with `exitCode`.
bool parseAppOptions(const QStringList& arguments, AppOptions& options, int& exitCode);

}  // namespace alap::app
