// Settings: the open conversation's system prompt, sampling, and what a model is loaded with
// (context length, cache mode, threads, GPU layers). Values are validated and persisted by
// AppSettings; load settings apply to the next model load.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

Dialog {
    id: root

    required property ChatController chat
    required property AppSettings settings

    title: qsTr("Settings")
    modal: true
    width: Math.min(parent ? parent.width - 80 : 640, 640)
    height: Math.min(parent ? parent.height - 60 : 700, 720)
    // Our own button (not standardButtons) so that its text follows a language switch.
    footer: DialogButtonBox {
        Button {
            text: qsTr("Close")
            onClicked: root.close()
        }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 8

            Label {
                text: qsTr("Language")
                font.bold: true
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    Layout.fillWidth: true
                    text: qsTr("Interface language")
                    wrapMode: Text.WordWrap
                }
                ComboBox {
                    objectName: "languageBox"
                    model: root.settings.languageNames
                    currentIndex: root.settings.languageIndex
                    Accessible.name: qsTr("Interface language")
                    onActivated: function(i) { root.settings.language = root.settings.languages[i] }
                }
            }
            CheckBox {
                objectName: "answerInBengaliDefault"
                text: qsTr("Answer in Bengali in new chats")
                checked: root.settings.answerInBengali
                Accessible.name: text
                onToggled: root.settings.answerInBengali = checked
            }

            Label {
                Layout.topMargin: 8
                text: qsTr("System prompt for this chat")
                font.bold: true
            }
            TextArea {
                objectName: "systemPromptField"
                Layout.fillWidth: true
                Layout.preferredHeight: 80
                wrapMode: TextEdit.Wrap
                text: root.chat.systemPrompt
                placeholderText: qsTr("For example: Answer briefly, in Bengali.")
                Accessible.name: qsTr("System prompt")
                onEditingFinished: root.chat.systemPrompt = text
            }

            Label {
                Layout.topMargin: 8
                text: qsTr("Sampling")
                font.bold: true
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Temperature")
                from: 0
                to: 2
                stepSize: 0.05
                value: root.settings.temperature
                onMoved: function(v) { root.settings.temperature = v }
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Top-k")
                from: 0
                to: 200
                stepSize: 1
                decimals: 0
                value: root.settings.topK
                onMoved: function(v) { root.settings.topK = Math.round(v) }
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Top-p")
                from: 0
                to: 1
                stepSize: 0.01
                value: root.settings.topP
                onMoved: function(v) { root.settings.topP = v }
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Min-p")
                from: 0
                to: 1
                stepSize: 0.01
                value: root.settings.minP
                onMoved: function(v) { root.settings.minP = v }
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Repeat penalty")
                from: 1
                to: 2
                stepSize: 0.01
                value: root.settings.repeatPenalty
                onMoved: function(v) { root.settings.repeatPenalty = v }
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Longest answer (tokens)")
                from: 16
                to: 8192
                stepSize: 16
                decimals: 0
                value: root.settings.maxTokens
                onMoved: function(v) { root.settings.maxTokens = Math.round(v) }
            }
            Button {
                text: qsTr("Reset sampling")
                Accessible.name: qsTr("Reset the sampling settings")
                onClicked: root.settings.resetSampling()
            }

            Label {
                Layout.topMargin: 8
                text: qsTr("Model loading (applies to the next load)")
                font.bold: true
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Context length")
                from: 256
                to: 32768
                stepSize: 256
                decimals: 0
                value: root.settings.contextLength
                onMoved: function(v) { root.settings.contextLength = Math.round(v) }
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    Layout.fillWidth: true
                    text: qsTr("Cache mode")
                }
                ComboBox {
                    objectName: "cacheModeBox"
                    model: root.settings.cacheModeLabels
                    currentIndex: root.settings.cacheModeIndex
                    Accessible.name: qsTr("Cache mode")
                    onActivated: function(i) { root.settings.cacheMode = root.settings.cacheModes[i] }
                }
            }
            SettingSlider {
                settings: root.settings
                label: qsTr("Threads (0: one per physical core)")
                from: 0
                to: 64
                stepSize: 1
                decimals: 0
                value: root.settings.threads
                onMoved: function(v) { root.settings.threads = Math.round(v) }
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    Layout.fillWidth: true
                    text: qsTr("GPU layers")
                    wrapMode: Text.WordWrap
                }
                ComboBox {
                    objectName: "gpuLayersBox"
                    implicitContentWidthPolicy: ComboBox.WidestText
                    model: [qsTr("Auto"), qsTr("CPU only"), qsTr("A number of layers")]
                    currentIndex: root.settings.gpuLayersChoice
                    Accessible.name: qsTr("GPU layers")
                    onActivated: function(i) { root.settings.gpuLayersChoice = i }
                }
                SpinBox {
                    objectName: "gpuLayersNumber"
                    visible: root.settings.gpuLayersChoice === 2
                    from: 1
                    to: 1000
                    editable: true
                    value: Math.max(1, root.settings.gpuLayers)
                    Accessible.name: qsTr("Number of layers on the GPU")
                    onValueModified: root.settings.gpuLayers = value
                }
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                opacity: 0.7
                text: root.settings.gpuLayersChoice === 0
                      ? qsTr("Auto puts as many layers on the GPU as fit in its memory; without a usable GPU the model runs on the CPU.")
                      : root.settings.gpuLayersChoice === 1
                        ? qsTr("The model runs on the CPU only.")
                        : qsTr("The first layers go to the GPU, the rest run on the CPU.")
            }
        }
    }
}
