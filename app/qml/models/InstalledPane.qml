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
    MessageDialog {
        id: confirmDelete
        property int row: -1
        property string fileName
        title: qsTr("Delete model")
        text: qsTr("Delete %1 from the disk?").arg(confirmDelete.fileName)
        buttons: MessageDialog.Yes | MessageDialog.No
        onAccepted: root.models.removeInstalled(confirmDelete.row)
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
    ListView {
        id: installed
        objectName: "installedList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: root.models.installed
        delegate: InstalledModelDelegate {
            id: installedRow
            contextLength: root.settings.contextLength
            loaded: installedRow.path === root.engine.modelPath && root.engine.modelLoaded
            onLoadRequested: root.engine.loadModel(installedRow.path)
            onRevealRequested: root.models.revealInFolder(installedRow.path)
            onDeleteRequested: {
                confirmDelete.row = installedRow.index;
                confirmDelete.fileName = installedRow.fileName;
                confirmDelete.open();
            }
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
