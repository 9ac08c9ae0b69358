// Search Hugging Face: a query, the matching GGUF repositories with downloads and likes, and for
// the chosen one its GGUF files grouped by quantisation with sizes, each with Download.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

ColumnLayout {
    id: root

    required property ModelsController models

    spacing: 6

    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: query
            objectName: "hfQuery"
            Layout.fillWidth: true
            placeholderText: qsTr("Search GGUF models on Hugging Face")
            Accessible.name: qsTr("Search Hugging Face")
            onAccepted: root.models.search(text)
        }
        Button {
            text: qsTr("Search")
            enabled: query.text.trim() !== "" && !root.models.searching
            onClicked: root.models.search(query.text)
        }
    }
    Label {
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        opacity: 0.7
        text: qsTr("Server: %1").arg(root.models.endpoint)
    }
    Label {
        Layout.fillWidth: true
        visible: root.models.searchError !== ""
        wrapMode: Text.WordWrap
        color: "#c62828"
        text: root.models.searchError
    }
    BusyIndicator {
        visible: root.models.searching || root.models.listingFiles
        running: visible
    }
    SplitView {
        Layout.fillWidth: true
        Layout.fillHeight: true
        ModelsListView {
            id: results
            objectName: "hfResults"
            SplitView.preferredWidth: root.width / 2
            clip: true
            models: root.models
            model: root.models.searchResults
            delegate: ItemDelegate {
                id: resultRow
                required property var modelData
                readonly property ModelsController models: (resultRow.ListView.view as ModelsListView).models
                width: resultRow.ListView.view.width
                text: qsTr("%1\n%2 downloads · %3 likes").arg(resultRow.modelData.id)
                      .arg(Number(resultRow.modelData.downloads).toLocaleString(Qt.locale(), "f", 0))
                      .arg(Number(resultRow.modelData.likes).toLocaleString(Qt.locale(), "f", 0))
                highlighted: resultRow.models.repoId === resultRow.modelData.id
                onClicked: resultRow.models.openRepository(resultRow.modelData.id)
            }
        }
        ModelsListView {
            id: files
            objectName: "hfFiles"
            clip: true
            models: root.models
            model: root.models.fileGroups
            delegate: RowLayout {
                id: fileRow
                required property var modelData
                required property int index
                width: fileRow.ListView.view.width
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.WordWrap
                    text: qsTr("%1 · %2 · %3").arg(fileRow.modelData.quant === "" ? qsTr("other") : fileRow.modelData.quant)
                          .arg(fileRow.modelData.name).arg(Qt.locale().formattedDataSize(Number(fileRow.modelData.size), 1))
                          + (fileRow.modelData.runnable ? "" : "\n"
                             + qsTr("Alap cannot run this quantisation yet: choose another, such as Q4_K_M or IQ4_XS."))
                }
                Button {
                    text: qsTr("Download")
                    enabled: fileRow.modelData.complete && fileRow.modelData.runnable
                    onClicked: (fileRow.ListView.view as ModelsListView).models.downloadGroup(fileRow.index)
                }
            }
        }
    }
}
