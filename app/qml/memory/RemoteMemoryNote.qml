// Shown over the memory meter while a remote server answers: no cache is kept on this machine.
import QtQuick
import QtQuick.Controls

Rectangle {
    id: root

    color: palette.window

    Label {
        anchors.centerIn: parent
        width: parent.width - 32
        wrapMode: Text.WordWrap
        horizontalAlignment: Text.AlignHCenter
        text: qsTr("The memory is on the remote server: this computer keeps no model and no cache.")
    }
}
