// The model picker: the models folder (a setting), the .gguf files in it, and loading one with
// progress and Cancel.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Alap

Dialog {
    id: root

    required property EngineController engine
    required property AppSettings settings
    required property ModelFileListModel modelFiles

    title: qsTr("Models")
    modal: true
    width: Math.min(parent ? parent.width - 80 : 640, 720)
    height: Math.min(parent ? parent.height - 80 : 520, 560)
    standardButtons: Dialog.Close
    onAboutToShow: root.modelFiles.refresh()

    FolderDialog {
        id: folderDialog
        title: qsTr("Choose the models folder")
        onAccepted: root.settings.modelsFolder = selectedFolder
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        Label {
            text: qsTr("Models folder")
            font.bold: true
        }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: folderField
                objectName: "modelsFolderField"
                Layout.fillWidth: true
                text: root.settings.modelsFolder
                placeholderText: qsTr("A folder with .gguf files")
                Accessible.name: qsTr("Models folder")
                onEditingFinished: root.settings.modelsFolder = text
            }
            Button {
                text: qsTr("Browse…")
                Accessible.name: qsTr("Browse for the models folder")
                onClicked: folderDialog.open()
            }
        }

        EngineListView {
            id: list
            engine: root.engine
            objectName: "modelFileList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.modelFiles
            currentIndex: -1
            Accessible.name: qsTr("Model files")
            Accessible.role: Accessible.List
            delegate: ModelFileDelegate {
                id: fileDelegate
                width: ListView.view.width
                loaded: fileDelegate.path === (ListView.view as EngineListView).engine.modelPath
                        && (ListView.view as EngineListView).engine.modelLoaded
                onLoadRequested: (ListView.view as EngineListView).engine.loadModel(fileDelegate.path)
            }
            Label {
                anchors.centerIn: parent
                width: parent.width - 32
                visible: list.count === 0
                wrapMode: Text.WordWrap
                horizontalAlignment: Text.AlignHCenter
                opacity: 0.7
                text: root.settings.modelsFolder === ""
                      ? qsTr("Choose a folder to see its models.")
                      : qsTr("No .gguf files in this folder.")
            }
        }

        ColumnLayout {
            Layout.fillWidth: true
            visible: root.engine.status === EngineController.Loading
            Label {
                text: root.engine.loadStage
            }
            RowLayout {
                Layout.fillWidth: true
                ProgressBar {
                    objectName: "loadProgress"
                    Layout.fillWidth: true
                    from: 0
                    to: 1
                    value: root.engine.loadProgress
                    Accessible.name: qsTr("Loading progress")
                }
                Button {
                    text: qsTr("Cancel")
                    Accessible.name: qsTr("Cancel loading")
                    onClicked: root.engine.cancelLoad()
                }
            }
        }

        Label {
            Layout.fillWidth: true
            visible: root.engine.errorText !== ""
            wrapMode: Text.WordWrap
            color: "#c62828"
            text: root.engine.errorText
        }
        Label {
            Layout.fillWidth: true
            visible: root.engine.modelLoaded
            wrapMode: Text.WordWrap
            text: qsTr("Loaded: %1").arg(root.engine.modelSummary)
        }
    }
}
