// One recommended model of the catalog: name, size, quantisation, license, languages (with a
// Bengali badge), description, whether it fits this machine, and Download.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: root

    required property int index
    required property string name
    required property var size
    required property string quantization
    required property string parameters
    required property string license
    required property var languages
    required property bool bengali
    required property string description
    required property string fit

    signal downloadRequested()

    width: ListView.view ? ListView.view.width : implicitWidth
    Accessible.name: root.name

    contentItem: ColumnLayout {
        spacing: 2
        RowLayout {
            Layout.fillWidth: true
            Label {
                Layout.fillWidth: true
                text: root.name
                font.bold: true
                elide: Text.ElideRight
            }
            Label {
                objectName: "bengaliBadge"
                visible: root.bengali
                text: qsTr("বাংলা")
                padding: 4
                color: "white"
                background: Rectangle { radius: 4; color: "#00695c" }
                Accessible.name: qsTr("Handles Bengali")
            }
            FitBadge {
                fit: root.fit
            }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            text: qsTr("%1 parameters · %2 · %3 · license %4 · languages: %5")
                  .arg(root.parameters).arg(root.quantization)
                  .arg(Qt.locale().formattedDataSize(Number(root.size), 1))
                  .arg(root.license).arg(root.languages.join(", "))
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            opacity: 0.8
            text: root.description
        }
        Button {
            objectName: "catalogDownload"
            text: qsTr("Download")
            onClicked: root.downloadRequested()
        }
    }
}
