// The sidebar: New chat, a search field over every message (full-text, in the store), and the
// conversations (pinned first), or the search hits while a query is typed.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Pane {
    id: root

    required property ChatController chat

    function focusSearch() {
        searchField.forceActiveFocus();
        searchField.selectAll();
    }

    padding: 8

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        Button {
            objectName: "newChatButton"
            Layout.fillWidth: true
            text: qsTr("New chat")
            Accessible.name: qsTr("Start a new chat")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("New chat (Ctrl+N)")
            onClicked: root.chat.newConversation()
        }

        TextField {
            id: searchField
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search all chats (Ctrl+F)")
            Accessible.name: qsTr("Search all chats")
            text: root.chat.searchQuery
            onTextEdited: root.chat.searchQuery = text
            Keys.onEscapePressed: {
                text = "";
                root.chat.searchQuery = "";
            }
        }

        ListView {
            id: conversationList
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            visible: root.chat.searchQuery === ""
            clip: true
            model: root.chat.conversations
            activeFocusOnTab: true
            Accessible.name: qsTr("Conversations")
            Accessible.role: Accessible.List
            delegate: ConversationDelegate {
                id: conversationDelegate
                width: conversationList.width
                current: conversationDelegate.conversationId === root.chat.currentConversationId
                onSelected: root.chat.selectConversation(conversationDelegate.conversationId)
                onRenameRequested: function(title) { root.chat.renameConversation(conversationDelegate.conversationId, title) }
                onPinRequested: function(pin) { root.chat.setPinned(conversationDelegate.conversationId, pin) }
                onDeleteRequested: root.chat.deleteConversation(conversationDelegate.conversationId)
            }
            Label {
                anchors.centerIn: parent
                width: parent.width - 16
                visible: conversationList.count === 0
                wrapMode: Text.WordWrap
                horizontalAlignment: Text.AlignHCenter
                opacity: 0.6
                text: qsTr("Your chats will appear here.")
            }
        }

        ListView {
            id: searchList
            objectName: "searchResults"
            Layout.fillWidth: true
            Layout.fillHeight: true
            visible: root.chat.searchQuery !== ""
            clip: true
            model: root.chat.searchResults
            Accessible.name: qsTr("Search results")
            Accessible.role: Accessible.List
            delegate: SearchResultDelegate {
                id: hitDelegate
                width: searchList.width
                onOpened: root.chat.openSearchHit(hitDelegate.conversationId, hitDelegate.messageId)
            }
            Label {
                anchors.centerIn: parent
                visible: searchList.count === 0
                opacity: 0.6
                text: qsTr("No matches")
            }
        }
    }
}
