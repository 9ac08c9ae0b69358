// GraphemeHoldback: QTextBoundaryFinder(Grapheme) over the held-back tail only.
#include "models/grapheme_holdback.h"

#include <QTextBoundaryFinder>

namespace alap::app {

bool GraphemeHoldback::endsInJoiner(QStringView text) {
  if (text.isEmpty()) return false;
  char32_t last = text.back().unicode();
  if (text.size() >= 2 && QChar::isLowSurrogate(last) && text[text.size() - 2].isHighSurrogate())
    last = QChar::surrogateToUcs4(text[text.size() - 2], text.back());
  if (last == 0x200C || last == 0x200D) return true;
  return QChar::combiningClass(last) == 9;  // virama / halant of any Indic script
}

qsizetype GraphemeHoldback::safePrefixLength(const QString& text) {
  if (text.isEmpty()) return 0;
  QTextBoundaryFinder finder(QTextBoundaryFinder::Grapheme, text);
  finder.toEnd();
  qsizetype cut = finder.toPreviousBoundary();  // the start of the last cluster
  while (cut > 0 && endsInJoiner(QStringView(text).left(cut))) cut = finder.toPreviousBoundary();
  return cut > 0 ? cut : 0;
}

QString GraphemeHoldback::push(const QString& chunk) {
  m_pending += chunk;
  const qsizetype n = safePrefixLength(m_pending);
  if (n <= 0) return {};
  QString out = m_pending.left(n);
  m_pending.remove(0, n);
  return out;
}

QString GraphemeHoldback::flush() {
  QString out;
  out.swap(m_pending);
  return out;
}

}  // namespace alap::app
