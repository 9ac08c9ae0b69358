// Qt Quick Test of DownloadDelegate: progress text, state words, errors translated by kind, verified tick.
import QtQuick
import QtTest
import Alap

TestCase {
    id: testCase
    name: "DownloadDelegate"
    width: 600
    height: 200
    visible: true
    when: windowShown

    Component {
        id: delegateComponent
        DownloadDelegate {
            width: 600
        }
    }

    function findChild(item, name) {
        if (item.objectName === name)
            return item;
        for (let i = 0; i < item.children.length; ++i) {
            const found = findChild(item.children[i], name);
            if (found)
                return found;
        }
        return null;
    }

    function row(state, extra) {
        const props = {
            model: { state: state }, downloadId: "u", fileName: "tiny-Q4_K_M.gguf", received: 1024 * 1024,
            total: 4 * 1024 * 1024, fraction: 0.25, speed: 512 * 1024, eta: 6, errorKind: "",
            errorMessage: "", verified: false
        };
        for (const k in extra) props[k] = extra[k];
        return createTemporaryObject(delegateComponent, testCase, props);
    }

    function test_running_shows_progress_and_pause() {
        const d = row("running", {});
        verify(d);
        const progress = findChild(d, "progressText");
        verify(progress.visible);
        verify(progress.text.indexOf("6 s") >= 0, progress.text);
        compare(findChild(d, "stateLabel").text, "Downloading");
        verify(!findChild(d, "errorText").visible);
        verify(!findChild(d, "verifiedTick").visible);
        const spy = createTemporaryQmlObject("import QtTest; SignalSpy {}", testCase);
        spy.target = d;
        spy.signalName = "pauseRequested";
        d.pauseRequested();
        compare(spy.count, 1);
    }

    function test_failed_error_is_translated_by_kind() {
        const d = row("failed", { errorKind: "checksum", errorMessage: "sha256 mismatch" });
        const error = findChild(d, "errorText");
        verify(error.visible);
        compare(error.text, "The download was damaged (checksum mismatch) and was deleted.");
        compare(findChild(d, "stateLabel").text, "Failed");
        verify(!findChild(d, "progressText").visible);
        compare(d.errorText("needs_token"), "This model is gated: add a Hugging Face access token in the Token tab.");
        compare(d.errorText("disk_full"), "The disk is full: free some space, then resume.");
    }

    function test_done_and_verified_shows_tick() {
        const d = row("done", { verified: true, fraction: 1 });
        verify(findChild(d, "verifiedTick").visible);
        compare(findChild(d, "stateLabel").text, "Done");
    }
}
