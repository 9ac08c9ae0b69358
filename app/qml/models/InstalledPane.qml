// The Installed tab: the models folder (a setting, with Browse), the GGUF files in it with their
// figures, and the progress of a load with Cancel. Delete asks first.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Alap

ColumnLayout {
    id: root

    required property ModelsController models
    required property EngineController engine
    required property AppSettings settings

    spacing: 6

    FolderDialog {
        id: folderDialog
        title: qsTr("Choose the models folder")
        onAccepted: root.settings.modelsFolder = selectedFolder
    }
    Dialog {
        id: confirmDelete
        objectName: "confirmDeleteModel"
        property int row: -1
        property string fileName
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Delete model")
        standardButtons: Dialog.Yes | Dialog.No
        onAccepted: root.models.removeInstalled(confirmDelete.row)
        Label {
            text: qsTr("Delete %1 from the disk?").arg(confirmDelete.fileName)
            wrapMode: Text.WordWrap
        }
    }

    RowLayout {
        Layout.fillWidth: true
        Label { text: qsTr("Models folder") }
        TextField {
            Layout.fillWidth: true
            text: root.settings.modelsFolder
            placeholderText: qsTr("A folder with .gguf files")
            Accessible.name: qsTr("Models folder")
            onEditingFinished: root.settings.modelsFolder = text
        }
        Button {
            text: qsTr("Browse…")
            onClicked: folderDialog.open()
        }
    }
    ModelsListView {
        id: installed
        objectName: "installedList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        models: root.models
        engine: root.engine
        settings: root.settings
        model: root.models.installed
        delegate: InstalledModelDelegate {
            id: installedRow
            readonly property ModelsListView view: installedRow.ListView.view as ModelsListView
            contextLength: installedRow.view.settings.contextLength
            loaded: installedRow.path === installedRow.view.engine.modelPath && installedRow.view.engine.modelLoaded
            onLoadRequested: installedRow.view.engine.loadModel(installedRow.path)
            onRevealRequested: installedRow.view.models.revealInFolder(installedRow.path)
            onDeleteRequested: installedRow.view.deleteRequested(installedRow.index, installedRow.fileName)
        }
        onDeleteRequested: function(row, fileName) {
            confirmDelete.row = row;
            confirmDelete.fileName = fileName;
            confirmDelete.open();
        }
        Label {
            anchors.centerIn: parent
            width: parent.width - 32
            visible: installed.count === 0
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            opacity: 0.7
            text: root.settings.modelsFolder === ""
                  ? qsTr("No models folder is chosen yet: choose one above, or download a model from the Catalog.")
                  : qsTr("No models in %1 yet: download one from the Catalog.").arg(root.settings.modelsFolder)
        }
    }
    RowLayout {
        Layout.fillWidth: true
        visible: root.engine.status === EngineController.Loading
        Label { text: root.engine.loadStage }
        ProgressBar {
            Layout.fillWidth: true
            from: 0
            to: 1
            value: root.engine.loadProgress
            Accessible.name: qsTr("Loading progress")
        }
        Button {
            text: qsTr("Cancel")
            onClicked: root.engine.cancelLoad()
        }
    }
    Label {
        Layout.fillWidth: true
        visible: root.engine.errorText !== ""
        wrapMode: Text.WordWrap
        color: "#c62828"
        text: root.engine.errorText
    }
}
