// One block of a message: prose shown as Markdown, or a fenced code block (CodeBlock).
import QtQuick
import QtQuick.Controls

Item {
    id: root

    required property var modelData
    signal copyRequested(string text)

    readonly property bool isCode: root.modelData.kind === "code"

    implicitHeight: root.isCode ? code.implicitHeight : prose.implicitHeight
    implicitWidth: root.isCode ? code.implicitWidth : Math.min(prose.implicitWidth, 820)

    TextEdit {
        id: prose
        visible: !root.isCode
        width: root.width
        text: root.isCode ? "" : root.modelData.text
        textFormat: TextEdit.MarkdownText
        wrapMode: TextEdit.Wrap
        readOnly: true
        selectByMouse: true
        color: palette.text
        onLinkActivated: function(link) { Qt.openUrlExternally(link) }
    }

    CodeBlock {
        id: code
        visible: root.isCode
        width: root.width
        code: root.isCode ? root.modelData.text : ""
        language: root.isCode ? root.modelData.language : ""
        onCopyRequested: root.copyRequested(code.code)
    }
}
