// A short message at the edge of the window with one action (Undo, Close).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: root

    property bool shown: false
    property string text
    property string actionText
    signal actionTriggered()

    visible: opacity > 0
    opacity: root.shown ? 1 : 0
    Behavior on opacity { NumberAnimation { duration: 150 } }
    radius: 6
    color: "#323232"
    implicitWidth: row.implicitWidth + 24
    implicitHeight: row.implicitHeight + 16
    Accessible.role: Accessible.AlertMessage
    Accessible.name: root.text

    RowLayout {
        id: row
        anchors.centerIn: parent
        spacing: 16
        Label {
            text: root.text
            color: "white"
            // Long messages (an import's reason, a file's path) wrap instead of being cut off.
            Layout.preferredWidth: Math.min(implicitWidth, 480)
            wrapMode: Text.Wrap
        }
        Button {
            text: root.actionText
            flat: true
            Accessible.name: root.actionText
            onClicked: root.actionTriggered()
        }
    }
}
