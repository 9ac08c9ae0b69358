// One installed model file: its figures (architecture, parameters, quantisation, context, size,
// memory at the chosen context in f16/k8/k8v8), or why it cannot run; Load, Reveal, Delete.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: root

    required property int index
    required property string path
    required property string fileName
    required property var fileSize
    required property bool valid
    required property bool supported
    required property string error
    required property string architecture
    required property string quantization
    required property var params
    required property var trainedContext
    required property var kvF16
    required property var kvK8
    required property var kvK8v8
    required property var needBytes
    required property string fit
    property int contextLength: 4096
    property bool loaded: false

    signal loadRequested()
    signal revealRequested()
    signal deleteRequested()

    function size(b) { return Qt.locale().formattedDataSize(Number(b), 1) }

    width: ListView.view ? ListView.view.width : implicitWidth
    Accessible.name: root.fileName

    contentItem: ColumnLayout {
        spacing: 2
        RowLayout {
            Layout.fillWidth: true
            Label {
                Layout.fillWidth: true
                text: root.fileName
                font.bold: true
                elide: Text.ElideMiddle
            }
            FitBadge {
                visible: root.valid && root.supported
                fit: root.fit
            }
        }
        Label {
            Layout.fillWidth: true
            visible: root.valid && root.supported
            wrapMode: Text.WordWrap
            text: qsTr("%1 · %2 billion parameters · %3 · trained context %4 · %5")
                  .arg(root.architecture).arg(Number(root.params / 1e9).toLocaleString(Qt.locale(), "f", 2))
                  .arg(root.quantization).arg(Number(root.trainedContext).toLocaleString(Qt.locale(), "f", 0))
                  .arg(root.size(root.fileSize))
        }
        Label {
            Layout.fillWidth: true
            visible: root.valid && root.supported
            wrapMode: Text.WordWrap
            opacity: 0.8
            text: qsTr("Cache at %1 tokens: f16 %2 · k8 %3 · k8v8 %4 · needs about %5")
                  .arg(root.contextLength.toLocaleString(Qt.locale(), "f", 0))
                  .arg(root.size(root.kvF16)).arg(root.size(root.kvK8)).arg(root.size(root.kvK8v8))
                  .arg(root.size(root.needBytes))
        }
        Label {
            objectName: "cannotRun"
            Layout.fillWidth: true
            visible: !root.valid || !root.supported
            wrapMode: Text.WordWrap
            color: "#c62828"
            text: qsTr("Cannot run: %1").arg(root.error)
        }
        RowLayout {
            Button {
                text: root.loaded ? qsTr("Loaded") : qsTr("Load")
                enabled: root.valid && root.supported && !root.loaded
                onClicked: root.loadRequested()
            }
            Button {
                text: qsTr("Show in folder")
                onClicked: root.revealRequested()
            }
            Button {
                text: qsTr("Delete…")
                onClicked: root.deleteRequested()
            }
        }
    }
}
