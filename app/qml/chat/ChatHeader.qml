// The tool bar above the chat: the conversation's title, Export, the loaded model, Models and
// Settings.
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
    signal exportRequested(string format)  // the open conversation, "markdown" or "json"

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
        ToolButton {
            objectName: "exportButton"
            text: qsTr("Export")
            visible: root.chat.hasConversation
            Accessible.name: qsTr("Export this chat")
            onClicked: exportMenu.popup()
            Menu {
                id: exportMenu
                MenuItem {
                    objectName: "exportMarkdownItem"
                    text: qsTr("Export as Markdown…")
                    onTriggered: root.exportRequested("markdown")
                }
                MenuItem {
                    objectName: "exportJsonItem"
                    text: qsTr("Export as JSON…")
                    onTriggered: root.exportRequested("json")
                }
            }
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
