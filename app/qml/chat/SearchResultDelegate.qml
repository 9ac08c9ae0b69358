// One search hit: the conversation's title and the words around the match, the match in bold.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: root

    required property var conversationId
    required property var messageId
    required property string title
    required property string snippet

    signal opened()

    Accessible.name: root.title
    onClicked: root.opened()

    contentItem: ColumnLayout {
        spacing: 2
        Label {
            Layout.fillWidth: true
            text: root.title
            font.bold: true
            elide: Text.ElideRight
        }
        Label {
            Layout.fillWidth: true
            text: root.snippet
            textFormat: Text.StyledText
            wrapMode: Text.WordWrap
            maximumLineCount: 3
            elide: Text.ElideRight
            opacity: 0.85
        }
    }
}
