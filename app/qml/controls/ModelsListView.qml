// A ListView of the Models page that carries the page's controllers, so that its delegates reach
// them through (ListView.view as ModelsListView) instead of ids outside the delegate, and hands
// row actions that need the page (a confirmation, a tab switch) up through its signals.
import QtQuick
import Alap

ListView {
    required property ModelsController models
    property EngineController engine
    property AppSettings settings

    signal downloadRequested(int row)
    signal deleteRequested(int row, string fileName)
}
