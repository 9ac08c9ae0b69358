// The tool bar above the chat: the conversation's title, the loaded model, Models and Settings.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

ToolBar {
    id: root

    required property ChatController chat
    required property EngineController engine
    signal modelsRequested()
    signal settingsRequested()

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 8
        spacing: 8

        Label {
            Layout.fillWidth: true
            text: root.chat.currentTitle
            elide: Text.ElideRight
            font.bold: true
            Accessible.role: Accessible.Heading
        }
        Label {
            text: root.engine.modelLoaded ? root.engine.modelName
                                          : (root.engine.status === EngineController.Loading ? qsTr("Loading…")
                                                                                             : qsTr("No model loaded"))
            opacity: 0.8
            elide: Text.ElideMiddle
            Layout.maximumWidth: 320
        }
        ToolButton {
            objectName: "modelsButton"
            text: qsTr("Models")
            Accessible.name: qsTr("Choose and load a model")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Models (Ctrl+L)")
            onClicked: root.modelsRequested()
        }
        ToolButton {
            objectName: "settingsButton"
            text: qsTr("Settings")
            Accessible.name: qsTr("Open the settings")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Settings (Ctrl+,)")
            onClicked: root.settingsRequested()
        }
    }
}
