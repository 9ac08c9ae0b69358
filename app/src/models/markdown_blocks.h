// Splits a message's Markdown into prose and fenced code blocks, so that QML can show prose with
// Text.MarkdownText and code in a monospace block with its own Copy button. An unclosed fence (a
// reply still streaming) runs to the end. Not a Markdown renderer.
#pragma once

#include <QList>
#include <QString>
#include <QVariantList>

namespace alap::app {

struct MarkdownBlock {
  enum Kind { Prose, Code };
  Kind kind = Prose;
  QString text;      // prose: Markdown; code: the code without its fences
  QString language;  // code: the info string's first word ("python"), may be empty
  bool closed = true;  // code: false while the closing fence has not arrived
  bool operator==(const MarkdownBlock&) const = default;
};

QList<MarkdownBlock> splitMarkdown(const QString& markdown);
// [{kind: "prose"|"code", text, language, closed}] for QML delegates.
QVariantList markdownBlocksToVariant(const QList<MarkdownBlock>& blocks);

}  // namespace alap::app
