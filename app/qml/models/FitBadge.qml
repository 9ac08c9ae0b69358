// A small coloured badge for a memory verdict: "fits", "tight", "too_large" or "unknown".
import QtQuick
import QtQuick.Controls

Label {
    id: root

    property string fit: "unknown"

    padding: 4
    font.pointSize: Application.font.pointSize * 0.9
    color: "white"
    text: root.fit === "fits" ? qsTr("Fits this machine")
        : root.fit === "tight" ? qsTr("Tight fit")
        : root.fit === "too_large" ? qsTr("Too large for this machine")
        : qsTr("Memory need unknown")
    background: Rectangle {
        radius: 4
        color: root.fit === "fits" ? "#2e7d32" : root.fit === "tight" ? "#ef6c00"
             : root.fit === "too_large" ? "#c62828" : "#757575"
    }
    Accessible.name: root.text
}
