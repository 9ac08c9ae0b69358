// A ListView that carries the EngineController, so that its delegates reach it through
// (ListView.view as EngineListView).engine instead of ids outside the delegate.
import QtQuick
import Alap

ListView {
    required property EngineController engine
}
