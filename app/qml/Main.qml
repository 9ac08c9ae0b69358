// The main window: for now a welcome page shown when no model is loaded.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ApplicationWindow {
    id: root
    width: 1100
    height: 720
    minimumWidth: 640
    minimumHeight: 420
    visible: true
    title: "Alap"

    ColumnLayout {
        anchors.centerIn: parent
        spacing: 12

        Label {
            Layout.alignment: Qt.AlignHCenter
            text: qsTr("Welcome to Alap")
            font.pixelSize: 28
        }
        Label {
            Layout.alignment: Qt.AlignHCenter
            Layout.maximumWidth: root.width * 0.7
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            text: qsTr("Chat with language models on your own computer, offline. Load or download a model to begin.")
        }
    }
}
