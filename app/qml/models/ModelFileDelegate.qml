// One .gguf file of the models folder, with its size and a Load button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: root

    required property string name
    required property string path
    required property string size
    property bool loaded: false
    signal loadRequested()

    Accessible.name: root.name
    onDoubleClicked: root.loadRequested()

    contentItem: RowLayout {
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 0
            Label {
                Layout.fillWidth: true
                text: root.name
                elide: Text.ElideMiddle
                font.bold: root.loaded
            }
            Label {
                text: root.size
                opacity: 0.6
            }
        }
        Button {
            text: root.loaded ? qsTr("Loaded") : qsTr("Load")
            enabled: !root.loaded
            Accessible.name: qsTr("Load %1").arg(root.name)
            onClicked: root.loadRequested()
        }
    }
}
