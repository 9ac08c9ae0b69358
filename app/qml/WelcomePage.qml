// Shown when no model is loaded and the chat is empty: what Alap is and what to do next.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: root

    property string modelsFolder
    signal modelsRequested()

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(root.width * 0.8, 640)
        spacing: 12

        Label {
            objectName: "welcomeTitle"
            Layout.alignment: Qt.AlignHCenter
            text: qsTr("Welcome to Alap")
            font.pointSize: Application.font.pointSize * 2.1
        }
        Label {
            objectName: "welcomeHint"
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            text: qsTr("Chat with language models on your own computer, offline. Load or download a model to begin.")
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            opacity: 0.75
            text: root.modelsFolder === ""
                  ? qsTr("Pick the folder that holds your .gguf model files.")
                  : qsTr("Models folder: %1").arg(root.modelsFolder)
        }
        Button {
            objectName: "chooseModelButton"
            Layout.alignment: Qt.AlignHCenter
            text: qsTr("Choose a model…")
            highlighted: true
            Accessible.name: text
            onClicked: root.modelsRequested()
        }
    }
}
