// The Hugging Face settings: the endpoint in use ($HF_ENDPOINT, for mirrors) and the optional
// access token for gated models, saved to a file only this user can read (never the database).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

ColumnLayout {
    id: root

    required property ModelsController models

    spacing: 6

    Label {
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        text: qsTr("Hugging Face server: %1 (set HF_ENDPOINT to use a mirror)").arg(root.models.endpoint)
    }
    Label {
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        text: root.models.hasToken ? qsTr("An access token is set (from %1).").arg(root.models.tokenSource)
                                   : qsTr("No access token: gated models cannot be downloaded.")
    }
    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: token
            objectName: "hfTokenField"
            Layout.fillWidth: true
            echoMode: TextInput.Password
            placeholderText: qsTr("Access token (hf_…)")
            Accessible.name: qsTr("Hugging Face access token")
        }
        Button {
            text: qsTr("Save token")
            enabled: token.text.trim() !== ""
            onClicked: if (root.models.setToken(token.text)) token.text = ""
        }
        Button {
            text: qsTr("Remove token")
            enabled: root.models.hasToken
            onClicked: root.models.setToken("")
        }
    }
    Label {
        Layout.fillWidth: true
        visible: root.models.tokenError !== ""
        wrapMode: Text.WordWrap
        color: "#c62828"
        text: root.models.tokenError
    }
    Item { Layout.fillHeight: true }
}
