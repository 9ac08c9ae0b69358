// The backend choice: this computer, or a remote OpenAI-compatible server (address, model,
// optional API key kept in a file only this user can read), with Connect.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

ColumnLayout {
    id: root

    required property BackendController backend
    required property EngineController engine

    spacing: 6

    RadioButton {
        text: qsTr("Run models on this computer")
        checked: !root.backend.remote
        onToggled: root.backend.remote = !checked
    }
    RadioButton {
        objectName: "remoteChoice"
        text: qsTr("Use a remote server (OpenAI-compatible)")
        checked: root.backend.remote
        onToggled: root.backend.remote = checked
    }
    GridLayout {
        Layout.fillWidth: true
        columns: 2
        enabled: root.backend.remote
        Label { text: qsTr("Server address") }
        TextField {
            objectName: "remoteUrl"
            Layout.fillWidth: true
            text: root.backend.url
            placeholderText: "http://127.0.0.1:8080/v1"
            Accessible.name: qsTr("Server address")
            onEditingFinished: root.backend.url = text
        }
        Label { text: qsTr("Model name") }
        TextField {
            objectName: "remoteModel"
            Layout.fillWidth: true
            text: root.backend.model
            placeholderText: qsTr("empty: the server's first model")
            Accessible.name: qsTr("Model name")
            onEditingFinished: root.backend.model = text
        }
        Label { text: qsTr("API key") }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: key
                Layout.fillWidth: true
                echoMode: TextInput.Password
                placeholderText: root.backend.hasKey ? qsTr("saved (type to replace)") : qsTr("optional")
                Accessible.name: qsTr("API key")
            }
            Button {
                text: qsTr("Save key")
                enabled: key.text.trim() !== ""
                onClicked: if (root.backend.setApiKey(key.text)) key.text = ""
            }
            Button {
                text: qsTr("Remove key")
                enabled: root.backend.hasKey
                onClicked: root.backend.setApiKey("")
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: root.backend.keyError !== ""
        wrapMode: Text.WordWrap
        color: "#c62828"
        text: root.backend.keyError
    }
    Button {
        objectName: "remoteConnect"
        enabled: root.backend.remote && root.backend.url !== "" && !root.engine.busy
        text: qsTr("Connect")
        onClicked: root.backend.connectRemote()
    }
    Label {
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        text: root.backend.remoteActive ? qsTr("Connected: %1").arg(root.engine.modelName)
                                        : root.engine.errorText
        color: root.backend.remoteActive ? palette.text : "#c62828"
    }
    Item { Layout.fillHeight: true }
}
