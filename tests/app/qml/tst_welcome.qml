import QtQuick
import QtTest
import Alap

TestCase {
    id: testCase
    name: "WelcomePage"
    width: 800
    height: 600
    visible: true
    when: windowShown

    Component {
        id: pageComponent
        WelcomePage {
            width: 800
            height: 600
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

    function test_showsTitleAndHint() {
        const page = createTemporaryObject(pageComponent, testCase);
        verify(page);
        const title = findChild(page, "welcomeTitle");
        verify(title, "title label exists");
        compare(title.text, "Welcome to Alap");
        verify(title.visible);
        const hint = findChild(page, "welcomeHint");
        verify(hint);
        verify(hint.text.indexOf("offline") >= 0);
        verify(hint.width <= page.width, "hint wraps inside the page");
    }
}
