// A labelled slider for one numeric setting, its value shown in the interface's locale.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Alap

RowLayout {
    id: root

    property string label
    property real from
    property real to
    property real stepSize: 0.01
    property int decimals: 2
    property real value
    // Formats the shown value in the interface's locale (C++ decides the digits).
    property AppSettings settings: null
    signal moved(real value)

    Layout.fillWidth: true

    Label {
        Layout.preferredWidth: 200
        text: root.label
        wrapMode: Text.WordWrap
    }
    Slider {
        id: slider
        Layout.fillWidth: true
        from: root.from
        to: root.to
        stepSize: root.stepSize
        value: root.value
        Accessible.name: root.label
        onMoved: root.moved(slider.value)
    }
    Label {
        Layout.preferredWidth: 64
        horizontalAlignment: Text.AlignRight
        text: root.settings ? root.settings.formatNumber(slider.value, root.decimals, root.settings.language)
                            : Number(slider.value).toFixed(root.decimals)
    }
}
