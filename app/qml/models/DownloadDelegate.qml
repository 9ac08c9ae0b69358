// One download: file name, progress bar, bytes, speed and time left, the error in words (by its
// kind), a tick when the SHA-256 was verified; Pause, Resume, Cancel, Remove from the list.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

ItemDelegate {
    id: root

    required property string downloadId
    required property string fileName
    required property var model  // for its "state" role (Item has a property of that name)
    readonly property string downloadState: root.model.state
    required property var received
    required property var total
    required property var fraction
    required property var speed
    required property var eta
    required property string errorKind
    required property string errorMessage
    required property bool verified

    signal pauseRequested()
    signal resumeRequested()
    signal cancelRequested()
    signal forgetRequested()

    function size(b) { return Qt.locale().formattedDataSize(Number(b), 1) }
    function duration(s) {
        if (s < 0) return qsTr("unknown")
        if (s < 60) return qsTr("%1 s").arg(Math.round(s).toLocaleString(Qt.locale(), "f", 0))
        if (s < 3600) return qsTr("%1 min").arg(Math.round(s / 60).toLocaleString(Qt.locale(), "f", 0))
        return qsTr("%1 h %2 min").arg(Math.floor(s / 3600).toLocaleString(Qt.locale(), "f", 0))
                                  .arg(Math.round((s % 3600) / 60).toLocaleString(Qt.locale(), "f", 0))
    }
    function errorText(kind) {
        switch (kind) {
        case "not_found": return qsTr("The file was not found on the server.")
        case "needs_token": return qsTr("This model is gated: add a Hugging Face access token in the Token tab.")
        case "forbidden": return qsTr("Access denied: accept the model's terms on its web page, or check the token.")
        case "offline": return qsTr("No connection to the server: check the network.")
        case "timeout": return qsTr("The server stopped answering.")
        case "server": return qsTr("The server had a problem; try again later.")
        case "disk_full": return qsTr("The disk is full: free some space, then resume.")
        case "io": return qsTr("The file could not be written.")
        case "checksum": return qsTr("The download was damaged (checksum mismatch) and was deleted.")
        case "invalid": return qsTr("This download is not allowed (bad address or file name).")
        }
        return ""
    }
    function stateText(s) {
        switch (s) {
        case "queued": return qsTr("Waiting")
        case "running": return qsTr("Downloading")
        case "paused": return qsTr("Paused")
        case "done": return qsTr("Done")
        case "failed": return qsTr("Failed")
        }
        return s
    }

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
            Label {
                objectName: "verifiedTick"
                visible: root.verified
                text: qsTr("✓ verified")
                color: "#2e7d32"
            }
            Label {
                objectName: "stateLabel"
                text: root.stateText(root.downloadState)
            }
        }
        ProgressBar {
            Layout.fillWidth: true
            from: 0
            to: 1
            indeterminate: root.downloadState === "running" && root.fraction < 0
            value: Math.max(0, root.fraction)
            visible: root.downloadState !== "done"
            Accessible.name: qsTr("Download progress")
        }
        Label {
            objectName: "progressText"
            Layout.fillWidth: true
            visible: root.downloadState === "running"
            text: qsTr("%1 of %2 · %3/s · %4 left").arg(root.size(root.received))
                  .arg(root.total >= 0 ? root.size(root.total) : qsTr("unknown"))
                  .arg(root.size(root.speed)).arg(root.duration(root.eta))
        }
        HoverTipLabel {
            objectName: "errorText"
            Layout.fillWidth: true
            visible: root.errorKind !== ""
            wrapMode: Text.WordWrap
            color: "#c62828"
            text: root.errorText(root.errorKind)
            tip: root.errorMessage
        }
        RowLayout {
            Button {
                visible: root.downloadState === "running" || root.downloadState === "queued"
                text: qsTr("Pause")
                onClicked: root.pauseRequested()
            }
            Button {
                visible: root.downloadState === "paused" || root.downloadState === "failed"
                text: qsTr("Resume")
                onClicked: root.resumeRequested()
            }
            Button {
                visible: root.downloadState !== "done"
                text: qsTr("Cancel")
                onClicked: root.cancelRequested()
            }
            Button {
                visible: root.downloadState === "done" || root.downloadState === "failed"
                text: qsTr("Remove from list")
                onClicked: root.forgetRequested()
            }
        }
    }
}
