// The live plot of cache bytes over the generated tokens of the current answer: one line for f16,
// one for the current mode. Drawn with Canvas from the points MemoryMeter keeps.
import QtQuick
import QtQuick.Controls

Item {
    id: root

    property var fp16Points: []
    property var modePoints: []
    property real maxBytes: 0
    property real maxTokens: 0
    property string maxText
    property string modeName

    readonly property color fp16Color: "#9e9e9e"
    readonly property color modeColor: "#1e88e5"

    Accessible.role: Accessible.Chart
    Accessible.name: qsTr("Cache bytes over generated tokens")

    onFp16PointsChanged: canvas.requestPaint()
    onModePointsChanged: canvas.requestPaint()

    Canvas {
        id: canvas
        anchors.fill: parent
        anchors.bottomMargin: legend.height + 4
        onPaint: {
            const ctx = getContext("2d");
            ctx.reset();
            ctx.strokeStyle = "#cccccc";
            ctx.lineWidth = 1;
            ctx.strokeRect(0.5, 0.5, width - 1, height - 1);
            if (root.maxBytes <= 0 || root.fp16Points.length < 2)
                return;
            const xScale = (width - 4) / Math.max(1, root.maxTokens);
            const yScale = (height - 8) / root.maxBytes;
            const draw = function(points, color) {
                ctx.strokeStyle = color;
                ctx.lineWidth = 2;
                ctx.beginPath();
                for (let i = 0; i < points.length; ++i) {
                    const x = 2 + points[i].x * xScale;
                    const y = height - 4 - points[i].y * yScale;
                    if (i === 0)
                        ctx.moveTo(x, y);
                    else
                        ctx.lineTo(x, y);
                }
                ctx.stroke();
            };
            draw(root.fp16Points, root.fp16Color);
            draw(root.modePoints, root.modeColor);
        }
    }

    Label {
        anchors.top: parent.top
        anchors.left: parent.left
        anchors.margins: 4
        visible: root.maxBytes > 0
        text: root.maxText
        font.pointSize: Application.font.pointSize * 0.85
        opacity: 0.7
    }

    Row {
        id: legend
        anchors.bottom: parent.bottom
        spacing: 12
        Row {
            spacing: 4
            visible: root.modeName !== "f16"  // in f16 the mode's line covers it: one entry
            Rectangle { width: 12; height: 3; y: 7; color: root.fp16Color }
            Label { text: "f16"; font.pointSize: Application.font.pointSize * 0.85 }
        }
        Row {
            spacing: 4
            Rectangle { width: 12; height: 3; y: 7; color: root.modeColor }
            Label { text: root.modeName; font.pointSize: Application.font.pointSize * 0.85 }
        }
    }
}
