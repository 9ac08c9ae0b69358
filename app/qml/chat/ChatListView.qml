// A ListView that carries the ChatController, so that its delegates reach it through
// (ListView.view as ChatListView).chat instead of ids outside the delegate.
import QtQuick
import Alap

ListView {
    required property ChatController chat
    // A delegate asks for an export of its conversation ("markdown" or "json").
    signal exportRequested(real conversationId, string format)
}
