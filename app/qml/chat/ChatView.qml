// The messages of the open conversation; follows the streaming answer while the view is at the
// bottom.
import QtQuick
import QtQuick.Controls
import Alap

ListView {
    id: root

    required property ChatController chat

    clip: true
    spacing: 4
    model: root.chat.messages
    activeFocusOnTab: true
    Accessible.name: qsTr("Messages")
    Accessible.role: Accessible.List
    ScrollBar.vertical: ScrollBar {}

    property bool following: true
    onMovementEnded: root.following = root.atYEnd
    onContentHeightChanged: if (root.following) root.positionViewAtEnd()

    delegate: MessageDelegate {
        width: ListView.view.width
        chat: (ListView.view as ChatView).chat
    }

    Connections {
        target: root.chat
        function onScrollToRow(row) {
            root.following = row === root.count - 1;
            root.positionViewAtIndex(row, root.following ? ListView.End : ListView.Beginning);
        }
    }

    Label {
        anchors.centerIn: parent
        visible: root.count === 0
        opacity: 0.6
        text: qsTr("Say hello: type a message below.")
    }
}
