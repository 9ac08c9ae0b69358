// One message: who wrote it, its Markdown (prose and code blocks, split in C++), its status and
// stats, and its actions (copy; edit and resend for the user's; regenerate for the last answer).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Item {
    id: root

    required property int index
    required property var messageId
    required property string role
    required property string content
    required property string status
    required property string stats
    required property string errorText
    required property var blocks
    required property bool streaming
    required property bool isLast
    required property ChatController chat

    property bool editing: false
    readonly property bool fromUser: root.role === "user"

    implicitHeight: bubble.implicitHeight + 12
    Accessible.role: Accessible.StaticText
    Accessible.name: (root.fromUser ? qsTr("You") : qsTr("Alap")) + ": " + root.content

    Rectangle {
        id: bubble
        x: root.fromUser ? root.width - width - 16 : 16
        y: 6
        width: Math.min(root.width - 32, Math.max(column.implicitWidth + 24, 160), 860)
        implicitHeight: column.implicitHeight + 20
        radius: 10
        color: root.fromUser ? "#e3edff" : "#f4f4f4"
        border.color: root.status === "error" ? "#c62828" : "transparent"

        ColumnLayout {
            id: column
            anchors.fill: parent
            anchors.margins: 10
            spacing: 6

            Label {
                text: root.fromUser ? qsTr("You") : qsTr("Alap")
                font.bold: true
                opacity: 0.7
            }

            Repeater {
                model: root.editing ? [] : root.blocks
                delegate: MessageBlock {
                    Layout.fillWidth: true
                    onCopyRequested: function(text) { root.chat.copyText(text) }
                }
            }

            BusyIndicator {
                visible: root.streaming && root.content === ""
                running: visible
                implicitWidth: 28
                implicitHeight: 28
                Accessible.name: qsTr("Answering")
            }

            TextArea {
                id: editor
                visible: root.editing
                Layout.fillWidth: true
                wrapMode: TextEdit.Wrap
                Accessible.name: qsTr("Edit your message")
                Keys.onEscapePressed: root.editing = false
            }

            Label {
                visible: root.status === "stopped" || root.status === "error"
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                color: root.status === "error" ? "#c62828" : "#8a6d00"
                text: root.status === "stopped" ? qsTr("Stopped") : qsTr("Error: %1").arg(root.errorText)
            }

            Label {
                visible: root.stats !== "" && !root.streaming
                text: root.stats
                opacity: 0.6
                font.pointSize: Application.font.pointSize * 0.85
            }

            RowLayout {
                spacing: 2
                visible: !root.streaming
                ToolButton {
                    visible: !root.editing
                    text: qsTr("Copy")
                    Accessible.name: qsTr("Copy this message")
                    onClicked: root.chat.copyMessage(root.index)
                }
                ToolButton {
                    visible: root.fromUser && !root.editing && root.chat.canSend
                    text: qsTr("Edit")
                    Accessible.name: qsTr("Edit and resend this message")
                    onClicked: {
                        editor.text = root.content;
                        root.editing = true;
                        editor.forceActiveFocus();
                    }
                }
                ToolButton {
                    visible: root.editing
                    text: qsTr("Save and resend")
                    Accessible.name: text
                    onClicked: if (root.chat.editAndResend(root.index, editor.text)) root.editing = false
                }
                ToolButton {
                    visible: root.editing
                    text: qsTr("Cancel")
                    Accessible.name: qsTr("Cancel editing")
                    onClicked: root.editing = false
                }
                ToolButton {
                    visible: !root.fromUser && root.isLast && root.chat.canRegenerate
                    text: qsTr("Regenerate")
                    Accessible.name: qsTr("Regenerate this answer")
                    onClicked: root.chat.regenerate()
                }
            }
        }
    }
}
