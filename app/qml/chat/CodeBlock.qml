// A fenced code block: monospace text, its language, and a Copy button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: root

    property string code
    property string language
    signal copyRequested()

    implicitHeight: layout.implicitHeight + 8
    implicitWidth: Math.min(codeText.implicitWidth + 24, 820)
    radius: 6
    color: "#272822"

    ColumnLayout {
        id: layout
        anchors.fill: parent
        anchors.margins: 4
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Label {
                Layout.leftMargin: 8
                Layout.fillWidth: true
                text: root.language === "" ? qsTr("code") : root.language
                color: "#a0a0a0"
                font.pointSize: Application.font.pointSize * 0.85
            }
            ToolButton {
                objectName: "copyCodeButton"
                text: qsTr("Copy")
                Accessible.name: qsTr("Copy the code")
                palette.buttonText: "#e0e0e0"
                onClicked: root.copyRequested()
            }
        }
        TextEdit {
            id: codeText
            Layout.fillWidth: true
            Layout.margins: 8
            text: root.code
            textFormat: TextEdit.PlainText
            font.family: "monospace"
            color: "#f8f8f2"
            wrapMode: TextEdit.WrapAnywhere
            readOnly: true
            selectByMouse: true
            Accessible.name: qsTr("Code")
        }
    }
}
