// The message field: Enter sends, Shift+Enter adds a line; Stop while an answer streams. Read-only
// with a clear hint when no model is loaded; a note while an answer waits for a quality check.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Pane {
    id: root

    required property ChatController chat

    function focusInput() {
        input.forceActiveFocus();
    }

    function submit() {
        if (root.chat.send(input.text))
            input.clear();
    }

    padding: 10

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        // Why an answer has not started yet (the placeholder above the field is a single line).
        Label {
            objectName: "waitingNote"
            Layout.fillWidth: true
            visible: root.chat.waitingForQualityCheck
            wrapMode: Text.WordWrap
            opacity: 0.8
            text: qsTr("Your message waits for the quality check to finish and is answered right after it.")
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8

            ScrollView {
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 44), 180)
                TextArea {
                    id: input
                    objectName: "composerInput"
                    focus: true
                    wrapMode: TextEdit.Wrap
                    placeholderText: root.chat.composerHint
                    readOnly: !root.chat.canSend && !root.chat.generating
                    Accessible.name: qsTr("Message")
                    Accessible.description: root.chat.composerHint
                    Keys.onReturnPressed: function(event) {
                        if (event.modifiers & Qt.ShiftModifier) {
                            event.accepted = false;
                        } else {
                            root.submit();
                            event.accepted = true;
                        }
                    }
                    Keys.onEnterPressed: function(event) {
                        if (event.modifiers & Qt.ShiftModifier) {
                            event.accepted = false;
                        } else {
                            root.submit();
                            event.accepted = true;
                        }
                    }
                }
            }

            CheckBox {
                objectName: "answerInBengaliBox"
                text: qsTr("Answer in Bengali")
                checked: root.chat.answerInBengali
                Accessible.name: qsTr("Answer in Bengali in this chat")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Adds an instruction to this chat to answer in Bengali")
                onToggled: root.chat.answerInBengali = checked
            }
            Button {
                objectName: "sendButton"
                visible: !root.chat.generating
                enabled: root.chat.canSend && input.text.trim() !== ""
                text: qsTr("Send")
                highlighted: true
                Accessible.name: qsTr("Send the message")
                onClicked: root.submit()
            }
            Button {
                objectName: "stopButton"
                visible: root.chat.generating
                text: qsTr("Stop")
                Accessible.name: qsTr("Stop the answer (Esc)")
                onClicked: root.chat.stop()
            }
        }
    }
}
