// A label whose tooltip (tip) shows while the pointer is over it; its id stays inside this file so
// that it may sit inside a control's deferred contentItem.
import QtQuick
import QtQuick.Controls

Label {
    id: root

    property string tip

    ToolTip.visible: hover.hovered && root.tip !== ""
    ToolTip.text: root.tip

    HoverHandler {
        id: hover
    }
}
