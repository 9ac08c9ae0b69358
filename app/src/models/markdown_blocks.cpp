// Fence detection per CommonMark: up to three spaces, then at least three ` or ~; a closing fence
// uses the same character, at least as many, and nothing after it but spaces.
#include "models/markdown_blocks.h"

#include <QVariantMap>

namespace alap::app {

namespace {

struct Fence {
  QChar ch;
  int length = 0;
  QString info;
};

bool parseFence(const QString& line, Fence& fence) {
  int i = 0;
  while (i < line.size() && i < 3 && line[i] == QLatin1Char(' ')) ++i;
  if (i >= line.size() || (line[i] != QLatin1Char('`') && line[i] != QLatin1Char('~'))) return false;
  const QChar ch = line[i];
  int n = 0;
  while (i + n < line.size() && line[i + n] == ch) ++n;
  if (n < 3) return false;
  const QString info = line.mid(i + n).trimmed();
  if (ch == QLatin1Char('`') && info.contains(QLatin1Char('`'))) return false;
  fence = {ch, n, info};
  return true;
}

void appendProse(QList<MarkdownBlock>& blocks, const QStringList& lines) {
  QString text = lines.join(QLatin1Char('\n'));
  if (text.trimmed().isEmpty()) return;
  while (text.endsWith(QLatin1Char('\n'))) text.chop(1);
  blocks.append({MarkdownBlock::Prose, text, {}, true});
}

}  // namespace

QList<MarkdownBlock> splitMarkdown(const QString& markdown) {
  QList<MarkdownBlock> blocks;
  const QStringList lines = markdown.split(QLatin1Char('\n'));
  QStringList prose;
  QStringList code;
  Fence open;
  bool inCode = false;
  for (const QString& line : lines) {
    Fence fence;
    if (!inCode) {
      if (parseFence(line, fence)) {
        appendProse(blocks, prose);
        prose.clear();
        open = fence;
        inCode = true;
      } else {
        prose.append(line);
      }
      continue;
    }
    if (parseFence(line, fence) && fence.ch == open.ch && fence.length >= open.length && fence.info.isEmpty()) {
      blocks.append({MarkdownBlock::Code, code.join(QLatin1Char('\n')), open.info.section(QLatin1Char(' '), 0, 0), true});
      code.clear();
      inCode = false;
    } else {
      code.append(line);
    }
  }
  if (inCode)
    blocks.append({MarkdownBlock::Code, code.join(QLatin1Char('\n')), open.info.section(QLatin1Char(' '), 0, 0), false});
  else
    appendProse(blocks, prose);
  return blocks;
}

QVariantList markdownBlocksToVariant(const QList<MarkdownBlock>& blocks) {
  QVariantList out;
  out.reserve(blocks.size());
  for (const MarkdownBlock& b : blocks) {
    QVariantMap m;
    m.insert(QStringLiteral("kind"), b.kind == MarkdownBlock::Code ? QStringLiteral("code") : QStringLiteral("prose"));
    m.insert(QStringLiteral("text"), b.text);
    m.insert(QStringLiteral("language"), b.language);
    m.insert(QStringLiteral("closed"), b.closed);
    out.append(m);
  }
  return out;
}

}  // namespace alap::app
