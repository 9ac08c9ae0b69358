// "Check quality on this model": one button, its progress, the figures in plain words and the
// recommended cache mode. Everything shown comes formatted from QualityCheck.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

ColumnLayout {
    id: root

    required property QualityCheck quality

    spacing: 4

    Label {
        Layout.topMargin: 8
        text: qsTr("Quality of the packed cache")
        font.bold: true
        Accessible.role: Accessible.Heading
    }
    RowLayout {
        Layout.fillWidth: true
        Button {
            objectName: "checkQualityButton"
            text: qsTr("Check quality on this model")
            enabled: root.quality.available && !root.quality.running
            Accessible.name: text
            Accessible.description: root.quality.hint
            onClicked: root.quality.start()
        }
        Button {
            visible: root.quality.running
            text: qsTr("Cancel")
            Accessible.name: qsTr("Cancel the quality check")
            onClicked: root.quality.cancel()
        }
    }
    ProgressBar {
        Layout.fillWidth: true
        visible: root.quality.running
        from: 0
        to: 1
        value: root.quality.progress
        Accessible.name: root.quality.progressText
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.WordWrap
        opacity: 0.7
        text: root.quality.running ? root.quality.progressText : root.quality.hint
    }
    Repeater {
        model: root.quality.resultLines
        delegate: Label {
            required property string modelData
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            text: modelData
        }
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.WordWrap
        font.bold: true
        text: root.quality.recommendationText
    }
    Button {
        objectName: "useRecommendedButton"
        visible: root.quality.canUseRecommendation
        text: qsTr("Use recommended mode")
        Accessible.name: qsTr("Use the recommended cache mode and reload the model")
        ToolTip.visible: hovered
        ToolTip.text: qsTr("Saves the recommended cache mode in the settings and reloads the model with it")
        onClicked: root.quality.useRecommendedMode()
    }
    Label {
        objectName: "appliedModeText"
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.WordWrap
        text: root.quality.appliedText
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.WordWrap
        color: "#b00020"
        text: root.quality.errorText
    }
}
