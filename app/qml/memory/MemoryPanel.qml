// The VRAM meter, always visible: K and V in f16 against the current mode, weights, free memory,
// the context free memory would still hold in each mode, the context budget and the live plot.
// Every number comes formatted from MemoryMeter.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Pane {
    id: root

    required property MemoryMeter meter
    required property EngineController engine
    required property QualityCheck quality

    Accessible.name: qsTr("Memory meter")

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 6

            Label {
                text: qsTr("Memory")
                font.bold: true
                font.pointSize: Application.font.pointSize * 1.35
                Accessible.role: Accessible.Heading
            }
            Label {
                Layout.fillWidth: true
                visible: !root.meter.hasModel
                wrapMode: Text.WordWrap
                opacity: 0.7
                text: qsTr("Load a model to see how much memory its cache takes.")
            }

            ColumnLayout {
                Layout.fillWidth: true
                visible: root.meter.hasModel
                spacing: 4

                Label {
                    Layout.fillWidth: true
                    text: root.meter.backendText
                    wrapMode: Text.WordWrap
                    Accessible.name: qsTr("Runs on: %1").arg(root.meter.backendText)
                }
                Label {
                    Layout.fillWidth: true
                    visible: root.meter.backendNote !== ""
                    text: root.meter.backendNote
                    wrapMode: Text.WordWrap
                    opacity: 0.7
                }
                Label {
                    text: qsTr("KV cache (%1)").arg(root.meter.cacheMode)
                    font.bold: true
                }
                MeterRow {
                    label: qsTr("K in f16")
                    value: root.meter.kFp16Text
                }
                MeterRow {
                    visible: root.meter.cacheMode !== "f16"  // f16 is the row above
                    label: qsTr("K in %1").arg(root.meter.cacheMode)
                    value: root.meter.kText
                }
                MeterRow {
                    label: qsTr("V in f16")
                    value: root.meter.vFp16Text
                }
                MeterRow {
                    visible: root.meter.cacheMode !== "f16"  // f16 is the row above
                    label: qsTr("V in %1").arg(root.meter.cacheMode)
                    value: root.meter.vText
                }
                ProgressBar {
                    Layout.fillWidth: true
                    visible: root.meter.cacheMode !== "f16"
                    from: 0
                    to: 1
                    value: root.meter.kvFraction
                    Accessible.name: qsTr("Cache size against f16")
                }
                Label {
                    visible: root.meter.savingText !== ""
                    text: root.meter.savingText
                    opacity: 0.8
                }
                MeterRow {
                    label: qsTr("Weights")
                    value: root.meter.weightsText
                }
                MeterRow {
                    label: root.meter.freeLabel
                    value: root.meter.freeText
                }

                Label {
                    Layout.topMargin: 8
                    Layout.fillWidth: true
                    wrapMode: Text.WordWrap
                    text: qsTr("Free memory would still hold")
                    font.bold: true
                }
                Repeater {
                    model: root.meter.modeCapacity
                    delegate: MeterRow {
                        required property var modelData
                        label: modelData.mode
                        value: modelData.tokensText
                        emphasized: modelData.current
                    }
                }

                Label {
                    Layout.topMargin: 8
                    text: qsTr("Context")
                    font.bold: true
                }
                ProgressBar {
                    Layout.fillWidth: true
                    from: 0
                    to: 1
                    value: root.meter.contextFraction
                    Accessible.name: qsTr("Context used")
                }
                Label {
                    text: root.meter.contextText
                }
                Label {
                    Layout.fillWidth: true
                    visible: root.meter.contextWarning
                    wrapMode: Text.WordWrap
                    color: "#b26a00"
                    text: qsTr("The context is nearly full: the oldest turns will soon be dropped. Start a new chat to keep everything.")
                }

                Label {
                    Layout.topMargin: 8
                    text: qsTr("Cache over this answer")
                    font.bold: true
                }
                CachePlot {
                    objectName: "cachePlot"
                    Layout.fillWidth: true
                    Layout.preferredHeight: 140
                    fp16Points: root.meter.fp16Points
                    modePoints: root.meter.modePoints
                    maxBytes: root.meter.plotMaxBytes
                    maxTokens: root.meter.plotMaxTokens
                    maxText: root.meter.plotMaxText
                    modeName: root.meter.cacheMode
                }
            }

            // Outside the block above: without a model the button shows, disabled, with its hint.
            QualityCheckSection {
                Layout.fillWidth: true
                quality: root.quality
            }
        }
    }
}
