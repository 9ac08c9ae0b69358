// Localizer: translator swap + default locale + QQmlEngine::retranslate; bundled fonts.
#include "i18n/localizer.h"

#include <QCoreApplication>
#include <QFont>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QQmlEngine>

namespace alap::app {

namespace {
// Qt's own texts for standard dialog buttons (QPlatformTheme::defaultStandardButtonText), so that
// lupdate puts them into alap_bn.ts: Qt ships no Bengali translation of its own.
[[maybe_unused]] const char* const kQtButtonTexts[] = {
    QT_TRANSLATE_NOOP("QPlatformTheme", "OK"),     QT_TRANSLATE_NOOP("QPlatformTheme", "Cancel"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Close"),  QT_TRANSLATE_NOOP("QPlatformTheme", "Open"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Save"),   QT_TRANSLATE_NOOP("QPlatformTheme", "Apply"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Reset"),  QT_TRANSLATE_NOOP("QPlatformTheme", "Help"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Discard"), QT_TRANSLATE_NOOP("QPlatformTheme", "&Yes"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "&No"),
};
}  // namespace

Localizer::Localizer(const QLocale& fallbackEnglish, QObject* parent)
    : QObject(parent),
      m_fallbackEnglish(fallbackEnglish.language() == QLocale::Bengali ? QLocale(QLocale::English, QLocale::UnitedStates)
                                                                       : fallbackEnglish),
      m_locale(m_fallbackEnglish),
      m_language(QStringLiteral("en")) {}

Localizer::~Localizer() {
  if (m_installed) QCoreApplication::removeTranslator(&m_translator);
}

QLocale Localizer::localeFor(const QString& language, const QLocale& fallbackEnglish) {
  if (language == QLatin1String("bn")) return QLocale(QLocale::Bengali, QLocale::Bangladesh);
  return fallbackEnglish;
}

bool Localizer::apply(const QString& language) {
  bool ok = true;
  if (m_installed) {
    QCoreApplication::removeTranslator(&m_translator);
    m_installed = false;
  }
  if (language == QLatin1String("bn")) {
    ok = m_translator.load(QStringLiteral(":/i18n/alap_bn.qm"));
    if (ok) m_installed = QCoreApplication::installTranslator(&m_translator);
  }
  m_language = language == QLatin1String("bn") ? language : QStringLiteral("en");
  m_locale = localeFor(m_language, m_fallbackEnglish);
  QLocale::setDefault(m_locale);
  if (m_qml) {
    m_qml->setUiLanguage(m_language);
    m_qml->retranslate();
  }
  emit localeChanged(m_locale);
  return ok;
}

QString formatDateTime(const QDateTime& time, const QLocale& locale) {
  if (locale.language() == QLocale::Bengali)
    return locale.toString(time, locale.dateFormat(QLocale::ShortFormat) + QStringLiteral(" H:mm"));
  return locale.toString(time, QLocale::ShortFormat);
}

QString loadBundledFonts() {
  static QString family = [] {
    QString name;
    for (const char* file : {":/fonts/NotoSansBengali-Regular.ttf", ":/fonts/NotoSansBengali-Bold.ttf"}) {
      const int id = QFontDatabase::addApplicationFont(QString::fromLatin1(file));
      if (id >= 0 && name.isEmpty()) name = QFontDatabase::applicationFontFamilies(id).value(0);
    }
    if (!name.isEmpty() && qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
      // The Latin font first, the Bengali one as the next fallback (whatever fontconfig offers).
      QFont font = QGuiApplication::font();
      QStringList families = font.families();
      if (families.isEmpty()) families << font.family();
      if (!families.contains(name)) families << name;
      font.setFamilies(families);
      QGuiApplication::setFont(font);
    }
    return name;
  }();
  return family;
}

}  // namespace alap::app
