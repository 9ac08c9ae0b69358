// The Models page: installed models, the catalog, Hugging Face search, downloads, the access
// token and the backend (local or remote), one tab each.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Dialog {
    id: root

    required property ModelsController models
    required property EngineController engine
    required property AppSettings settings
    required property BackendController backend

    title: qsTr("Models")
    modal: true
    width: Math.min(parent ? parent.width - 60 : 900, 960)
    height: Math.min(parent ? parent.height - 60 : 640, 720)
    standardButtons: Dialog.Close
    onAboutToShow: root.models.refreshLists()

    ColumnLayout {
        anchors.fill: parent
        spacing: 6

        TabBar {
            id: tabs
            objectName: "modelsTabs"
            Layout.fillWidth: true
            TabButton { text: qsTr("Installed") }
            TabButton { text: qsTr("Catalog") }
            TabButton { text: qsTr("Search") }
            TabButton { text: qsTr("Downloads (%1)").arg(root.models.downloadCount.toLocaleString(Qt.locale(), "f", 0)) }
            TabButton { text: qsTr("Token") }
            TabButton { text: qsTr("Backend") }
        }
        Label {
            objectName: "machineMemory"
            Layout.fillWidth: true
            opacity: 0.8
            text: qsTr("This computer: %1 of memory, %2 free now · estimates for a context of %3 tokens in %4 mode")
                  .arg(Qt.locale().formattedDataSize(root.models.totalMemory, 1))
                  .arg(Qt.locale().formattedDataSize(root.models.availableMemory, 1))
                  .arg(root.settings.contextLength.toLocaleString(Qt.locale(), "f", 0))
                  .arg(root.settings.estimateCacheMode)
        }
        Label {
            Layout.fillWidth: true
            visible: root.models.notice !== ""
            wrapMode: Text.WordWrap
            color: "#c62828"
            text: root.models.notice
        }
        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex

            InstalledPane {
                models: root.models
                engine: root.engine
                settings: root.settings
            }
            ModelsListView {
                id: catalog
                objectName: "catalogList"
                clip: true
                models: root.models
                model: root.models.catalog
                delegate: CatalogDelegate {
                    id: catalogRow
                    onDownloadRequested: (catalogRow.ListView.view as ModelsListView).downloadRequested(catalogRow.index)
                }
                onDownloadRequested: function(row) {
                    root.models.downloadCatalog(row);
                    tabs.currentIndex = 3;
                }
            }
            HfSearchPane {
                models: root.models
            }
            ModelsListView {
                id: downloads
                objectName: "downloadList"
                clip: true
                models: root.models
                model: root.models.downloads
                delegate: DownloadDelegate {
                    id: downloadRow
                    onPauseRequested: (downloadRow.ListView.view as ModelsListView).models.pauseDownload(downloadRow.downloadId)
                    onResumeRequested: (downloadRow.ListView.view as ModelsListView).models.resumeDownload(downloadRow.downloadId)
                    onCancelRequested: (downloadRow.ListView.view as ModelsListView).models.cancelDownload(downloadRow.downloadId)
                    onForgetRequested: (downloadRow.ListView.view as ModelsListView).models.forgetDownload(downloadRow.downloadId)
                }
                Label {
                    anchors.centerIn: parent
                    visible: downloads.count === 0
                    opacity: 0.7
                    text: qsTr("No downloads.")
                }
            }
            HfTokenPane {
                models: root.models
            }
            RemoteBackendPane {
                backend: root.backend
                engine: root.engine
            }
        }
    }
}
