// One conversation in the sidebar: title, pin mark, and a menu to rename, pin, export or delete it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: root

    required property int index
    required property var conversationId
    required property string title
    required property bool pinned
    required property string updated
    required property bool current  // the open conversation

    signal selected()
    signal renameRequested(string title)
    signal pinRequested(bool pin)
    signal deleteRequested()
    signal exportRequested(string format)  // "markdown" or "json"

    highlighted: root.current
    text: root.title
    Accessible.name: root.pinned ? qsTr("%1, pinned").arg(root.title) : root.title
    onClicked: root.selected()
    Keys.onDeletePressed: root.deleteRequested()

    contentItem: RowLayout {
        spacing: 4
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 0
            Label {
                Layout.fillWidth: true
                text: root.title === "" ? qsTr("Untitled chat") : root.title
                elide: Text.ElideRight
                font.bold: root.current
            }
            Label {
                Layout.fillWidth: true
                text: root.updated
                font.pointSize: Application.font.pointSize * 0.85
                opacity: 0.6
                elide: Text.ElideRight
            }
        }
        Label {
            visible: root.pinned
            text: "\u{1F4CC}"
            Accessible.name: qsTr("Pinned")
        }
        ToolButton {
            text: "\u22EF"
            Accessible.name: qsTr("Actions for %1").arg(root.title)
            onClicked: root.menuRequested()
        }
    }

    signal menuRequested()
    onMenuRequested: actionsMenu.popup()

    Menu {
        id: actionsMenu
        MenuItem {
            text: qsTr("Rename…")
            onTriggered: renameDialog.open()
        }
        MenuItem {
            text: root.pinned ? qsTr("Unpin") : qsTr("Pin")
            onTriggered: root.pinRequested(!root.pinned)
        }
        MenuItem {
            text: qsTr("Export as Markdown…")
            onTriggered: root.exportRequested("markdown")
        }
        MenuItem {
            text: qsTr("Export as JSON…")
            onTriggered: root.exportRequested("json")
        }
        MenuItem {
            text: qsTr("Delete")
            onTriggered: root.deleteRequested()
        }
    }

    Dialog {
        id: renameDialog
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Rename chat")
        standardButtons: Dialog.Ok | Dialog.Cancel
        onAboutToShow: {
            titleField.text = root.title;
            titleField.selectAll();
            titleField.forceActiveFocus();
        }
        onAccepted: root.renameRequested(titleField.text)
        TextField {
            id: titleField
            implicitWidth: 320
            Accessible.name: qsTr("New title")
            onAccepted: renameDialog.accept()
        }
    }
}
