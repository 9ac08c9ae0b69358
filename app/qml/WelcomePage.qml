// Shown when no model is loaded: what Alap is and what to do next.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: root

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(root.width * 0.8, 640)
        spacing: 12

        Label {
            objectName: "welcomeTitle"
            Layout.alignment: Qt.AlignHCenter
            text: qsTr("Welcome to Alap")
            font.pixelSize: 28
        }
        Label {
            objectName: "welcomeHint"
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            text: qsTr("Chat with language models on your own computer, offline. Load or download a model to begin.")
        }
    }
}
