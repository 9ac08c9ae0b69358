// GraphemeHoldback: makes a stream of text chunks safe to show. The last grapheme cluster of what
// has arrived is held back until more text arrives or the stream ends, and so is any cluster that
// ends in a joiner (virama, ZWJ, ZWNJ), because the next consonant joins it into a conjunct
// (ক + ্ + ষ = ক্ষ; Unicode 15.0 segmentation alone would show ক্ first). Not a detokenizer:
// chunks are already whole code points (core's StreamingDetokenizer holds back broken UTF-8).
//
//   GraphemeHoldback h;
//   show(h.push(chunk));   // for every chunk
//   show(h.flush());       // at the end
#pragma once

#include <QString>

namespace alap::app {

class GraphemeHoldback {
 public:
  // Adds `chunk`; returns the text that became safe to show (possibly empty).
  QString push(const QString& chunk);
  // Ends the stream: returns what was held back.
  QString flush();
  void clear() { m_pending.clear(); }
  const QString& pending() const { return m_pending; }

  // Length of the longest prefix of `text` that ends on a grapheme boundary, leaves the last
  // cluster out, and does not end in a joiner.
  static qsizetype safePrefixLength(const QString& text);
  static bool endsInJoiner(QStringView text);

 private:
  QString m_pending;
};

}  // namespace alap::app
