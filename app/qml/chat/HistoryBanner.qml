// A banner shown only when the history database could not be opened for writing, with the offer
// to save a backup copy of it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Rectangle {
    id: root

    required property ChatController chat

    visible: root.chat.historyReadOnly
    implicitHeight: visible ? row.implicitHeight + 16 : 0
    color: "#fff3cd"

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.margins: 8
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: "#5c4400"
            text: root.chat.historyMessage
        }
        Button {
            text: qsTr("Save a backup copy")
            Accessible.name: text
            onClicked: root.chat.backupHistory()
        }
    }
}
