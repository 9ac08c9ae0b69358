// The main window. Holds the pages; knows nothing of the engine beyond what view models expose.
import QtQuick
import QtQuick.Controls

ApplicationWindow {
    id: root
    width: 1100
    height: 720
    minimumWidth: 640
    minimumHeight: 420
    visible: true
    title: "Alap"

    WelcomePage {
        anchors.fill: parent
    }
}
