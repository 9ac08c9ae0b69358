// The main window: sidebar (conversations, search), the chat, the memory meter. Knows nothing of
// the engine beyond what the controllers it is given expose.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Alap

ApplicationWindow {
    id: root

    required property ChatController chat
    required property EngineController engine
    required property AppSettings settings
    required property MemoryMeter meter
    required property ModelFileListModel modelFiles
    required property ModelsController models
    required property BackendController backend
    required property QualityCheck quality

    width: 1280
    height: 800
    minimumWidth: 760
    minimumHeight: 480
    visible: true
    title: "Alap"

    function openModels() {
        modelsPage.open();
    }

    // Export a conversation: the save dialog proposes <documents>/<title>.md or .json.
    function exportChat(conversationId, format) {
        exportDialog.conversationId = conversationId;
        exportDialog.format = format;
        exportDialog.selectedFile = root.chat.suggestedExportFile(conversationId, format);
        exportDialog.open();
    }

    function importChat() {
        importDialog.open();
    }

    Shortcut {
        sequence: "Ctrl+N"
        onActivated: {
            root.chat.newConversation();
            composer.focusInput();
        }
    }
    Shortcut {
        sequence: "Esc"
        enabled: root.chat.generating
        onActivated: root.chat.stop()
    }
    Shortcut {
        sequence: "Ctrl+F"
        onActivated: sidebar.focusSearch()
    }
    Shortcut {
        sequence: "Ctrl+L"
        onActivated: root.openModels()
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: settingsDialog.open()
    }

    header: ChatHeader {
        chat: root.chat
        engine: root.engine
        onModelsRequested: root.openModels()
        onSettingsRequested: settingsDialog.open()
        onExportRequested: function(format) { root.exportChat(root.chat.currentConversationId, format) }
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ConversationSidebar {
            id: sidebar
            Layout.preferredWidth: 260
            Layout.fillHeight: true
            chat: root.chat
            onExportRequested: function(conversationId, format) { root.exportChat(conversationId, format) }
            onImportRequested: root.importChat()
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            HistoryBanner {
                Layout.fillWidth: true
                chat: root.chat
            }

            WelcomePage {
                objectName: "welcomePage"
                Layout.fillWidth: true
                Layout.fillHeight: true
                visible: !root.engine.modelLoaded && root.chat.messages.count === 0
                modelsFolder: root.settings.modelsFolder
                onModelsRequested: root.openModels()
            }

            ChatView {
                objectName: "chatView"
                Layout.fillWidth: true
                Layout.fillHeight: true
                visible: root.engine.modelLoaded || root.chat.messages.count > 0
                chat: root.chat
            }

            Composer {
                id: composer
                Layout.fillWidth: true
                chat: root.chat
            }
        }

        MemoryPanel {
            Layout.preferredWidth: 300
            Layout.fillHeight: true
            meter: root.meter
            engine: root.engine
            quality: root.quality

            RemoteMemoryNote {
                anchors.fill: parent
                visible: root.backend.remoteActive
            }
        }
    }

    ModelPicker {
        id: modelPicker
        anchors.centerIn: parent
        engine: root.engine
        settings: root.settings
        modelFiles: root.modelFiles
    }

    ModelsPage {
        id: modelsPage
        objectName: "modelsPage"
        anchors.centerIn: parent
        models: root.models
        engine: root.engine
        settings: root.settings
        backend: root.backend
    }

    FileDialog {
        id: exportDialog
        objectName: "exportDialog"
        property real conversationId: 0
        property string format: "markdown"
        title: exportDialog.format === "json" ? qsTr("Export the chat as JSON") : qsTr("Export the chat as Markdown")
        fileMode: FileDialog.SaveFile
        currentFolder: root.chat.documentsFolder
        defaultSuffix: exportDialog.format === "json" ? "json" : "md"
        nameFilters: exportDialog.format === "json" ? [qsTr("JSON files (*.json)")] : [qsTr("Markdown files (*.md)")]
        onAccepted: root.chat.exportConversation(exportDialog.conversationId, exportDialog.selectedFile, exportDialog.format)
    }

    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import a chat")
        fileMode: FileDialog.OpenFile
        currentFolder: root.chat.documentsFolder
        nameFilters: [qsTr("Chats exported by Alap (*.json)"), qsTr("All files (*)")]
        onAccepted: root.chat.importConversation(importDialog.selectedFile)
    }

    SettingsPage {
        id: settingsDialog
        anchors.centerIn: parent
        chat: root.chat
        settings: root.settings
    }

    Snackbar {
        objectName: "undoSnackbar"
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 96
        shown: root.chat.undoAvailable
        text: root.chat.undoText
        actionText: qsTr("Undo")
        onActionTriggered: root.chat.undoDelete()
    }

    Snackbar {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 12
        shown: root.chat.notice !== ""
        text: root.chat.notice
        actionText: qsTr("Close")
        onActionTriggered: root.chat.clearNotice()
        onShownChanged: if (shown) noticeTimer.restart()
        Timer {
            id: noticeTimer
            interval: 5000
            onTriggered: root.chat.clearNotice()
        }
    }
}
