// The sidebar: New chat, a search field over every message (full-text, in the store), and the
// conversations (pinned first), or the search hits while a query is typed; Import conversation.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Pane {
    id: root

    required property ChatController chat
    signal exportRequested(real conversationId, string format)
    signal importRequested()

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

        ChatListView {
            id: conversationList
            chat: root.chat
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
                width: ListView.view.width
                onSelected: (ListView.view as ChatListView).chat.selectConversation(conversationDelegate.conversationId)
                onRenameRequested: function(title) { (conversationDelegate.ListView.view as ChatListView).chat.renameConversation(conversationDelegate.conversationId, title) }
                onPinRequested: function(pin) { (conversationDelegate.ListView.view as ChatListView).chat.setPinned(conversationDelegate.conversationId, pin) }
                onDeleteRequested: (ListView.view as ChatListView).chat.deleteConversation(conversationDelegate.conversationId)
                onExportRequested: function(format) { (conversationDelegate.ListView.view as ChatListView).exportRequested(conversationDelegate.conversationId, format) }
            }
            onExportRequested: function(conversationId, format) { root.exportRequested(conversationId, format) }
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

        ChatListView {
            id: searchList
            chat: root.chat
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
                width: ListView.view.width
                onOpened: (ListView.view as ChatListView).chat.openSearchHit(hitDelegate.conversationId, hitDelegate.messageId)
            }
            Label {
                anchors.centerIn: parent
                visible: searchList.count === 0
                opacity: 0.6
                text: qsTr("No matches")
            }
        }

        Button {
            objectName: "importButton"
            Layout.fillWidth: true
            flat: true
            text: qsTr("Import conversation…")
            enabled: !root.chat.historyReadOnly
            Accessible.name: qsTr("Import a chat from a JSON file exported by Alap")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Import a chat from a JSON file exported by Alap")
            onClicked: root.importRequested()
        }
    }
}
