// A label and its value on one line of the memory meter.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

RowLayout {
    id: root

    property string label
    property string value
    property bool emphasized: false

    Layout.fillWidth: true
    Accessible.name: root.label + ": " + root.value

    Label {
        Layout.fillWidth: true
        text: root.label
        elide: Text.ElideRight
        font.bold: root.emphasized
    }
    Label {
        text: root.value
        font.bold: root.emphasized
    }
}
