// Localizer: applies the interface language at run time. Swaps the QTranslator (":/i18n/alap_<lang>.qm"),
// sets the default QLocale (Bengali digits and lakh grouping for "bn"), asks the QML engine to
// retranslate, and tells the rest of the app through localeChanged. Not the setting itself:
// AppSettings::language persists the choice; AppContext connects the two.
#pragma once

#include <QDateTime>
#include <QLocale>
#include <QObject>
#include <QPointer>
#include <QTranslator>

#include <QQmlEngine>

namespace alap::app {

class Localizer : public QObject {
  Q_OBJECT

 public:
  // `fallbackEnglish` is the locale used for "en" (the system's when it is not Bengali, so that an
  // English interface keeps the user's regional number format).
  explicit Localizer(const QLocale& fallbackEnglish, QObject* parent = nullptr);
  ~Localizer() override;

  // Installs the translation of `language` ("en" or "bn"), sets the default locale, retranslates
  // the QML engine when one is set. Returns false when the translation could not be loaded.
  bool apply(const QString& language);
  void setQmlEngine(QQmlEngine* engine) { m_qml = engine; }

  QString language() const { return m_language; }
  QLocale locale() const { return m_locale; }
  static QLocale localeFor(const QString& language, const QLocale& fallbackEnglish);

 signals:
  void localeChanged(const QLocale& locale);

 private:
  QLocale m_fallbackEnglish;
  QLocale m_locale;
  QString m_language;
  QTranslator m_translator;
  bool m_installed = false;
  QPointer<QQmlEngine> m_qml;
};

// A date and time in `locale`'s short format. Bengali gets a 24-hour time, since Qt's Bengali
// locale has only the Latin "AM"/"PM" (৩০/১১/২৬ ১৪:০৫, not ৩০/১১/২৬ ২:০৫ PM).
QString formatDateTime(const QDateTime& time, const QLocale& locale = QLocale());

// Registers the bundled fonts (Noto Sans Bengali, ":/fonts/") with QFontDatabase once and adds
// them to the application font's fallback families. Returns the family name ("" when missing).
QString loadBundledFonts();

}  // namespace alap::app
