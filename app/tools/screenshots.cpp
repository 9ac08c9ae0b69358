// alap-screenshots: the window's main views as PNG files, for docs/screenshots (run by
// scripts/screenshots under Xvfb). The real Main.qml and AppContext on a FakeEngine (so the meter
// has a model and a plot) over a temporary database filled with a sample English and Bengali
// conversation. Writes chat, search, models, settings and meter-<lang>.png into --out.
// A developer tool, not shipped: it never touches the user's settings or history.
#include <QCommandLineParser>
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>
#include <QtQml/QQmlExtensionPlugin>
#include <functional>

#include "app_context.h"
#include "controllers/app_settings.h"
#include "controllers/chat_controller.h"
#include "core/engine/fake_engine.h"
#include "core/store/store.h"
#include "engine/engine_controller.h"
#include "store/store_worker.h"

Q_IMPORT_QML_PLUGIN(AlapPlugin)

using namespace alap::app;
namespace st = alap::store;

namespace {

const char* kStats = R"({"tokens":148,"prompt_tokens":42,"tokens_per_s":21.4,"ttft_ms":310,"total_ms":6950,"cache_mode":"k8"})";

void fillSample(const QString& path, bool bengali) {
  auto store = st::Store::open(path.toStdString());
  auto add = [&](st::Id c, const char* role, const std::string& text) {
    st::NewMessage m;
    m.role = role;
    m.content = text;
    m.model = "Qwen2.5 1.5B Instruct Q4_K_M";
    if (std::string(role) == "assistant") m.stats_json = kStats;
    return store.append_message(c, m);
  };
  // Older chats for the sidebar.
  for (const char* t : {"Weekend trip plan", "চিংড়ি মালাইকারি রান্না", "SQL query help", "রবীন্দ্রনাথের কবিতা"})
    add(store.create_conversation(t), "user", t);
  const st::Id en = store.create_conversation("Rivers of Bengal");
  add(en, "user", "Which rivers form the Bengal delta?");
  add(en, "assistant",
      "Three great rivers meet in the **Bengal delta**:\n\n"
      "- the **Padma** (the Ganges in Bangladesh),\n- the **Jamuna** (the Brahmaputra),\n- the **Meghna**.\n\n"
      "Their silt builds new land every monsoon. To list them in Python:\n\n"
      "```python\nrivers = [\"Padma\", \"Jamuna\", \"Meghna\"]\nprint(\", \".join(rivers))\n```");
  const st::Id bn = store.create_conversation("বাংলা ভাষার ইতিহাস");
  add(bn, "user", "বাংলা ভাষা কত পুরোনো? সংক্ষেপে বলুন।");
  add(bn, "assistant",
      "বাংলা ভাষার জন্ম প্রায় এক হাজার বছর আগে, মাগধী প্রাকৃত থেকে।\n\n"
      "- **চর্যাপদ** (দশম–দ্বাদশ শতক) সবচেয়ে পুরোনো নিদর্শন।\n"
      "- মধ্যযুগে শ্রীকৃষ্ণকীর্তন আর মঙ্গলকাব্য।\n"
      "- আধুনিক যুগে রবীন্দ্রনাথ ঠাকুর, কাজী নজরুল ইসলাম।\n\n"
      "১৯৫২ সালের ২১শে ফেব্রুয়ারির ভাষা আন্দোলন আজ আন্তর্জাতিক মাতৃভাষা দিবস। যুক্তাক্ষর: ক্ষ, জ্ঞ, স্ত্র, ন্দ্র।");
  (void)bengali;
}

QObject* findByClass(QObject* root, const char* prefix) {
  for (QObject* o : root->findChildren<QObject*>())
    if (QByteArray(o->metaObject()->className()).startsWith(prefix)) return o;
  return nullptr;
}

void closePopups(QQuickWindow* window) {
  for (QObject* o : window->findChildren<QObject*>())
    if (o->inherits("QQuickPopup") && o->property("visible").toBool()) QMetaObject::invokeMethod(o, "close");
}

}  // namespace

int main(int argc, char* argv[]) {
  QGuiApplication app(argc, argv);
  QCommandLineParser parser;
  parser.addHelpOption();
  QCommandLineOption langOption(QStringLiteral("lang"), QStringLiteral("en or bn"), QStringLiteral("code"), QStringLiteral("en"));
  QCommandLineOption outOption(QStringLiteral("out"), QStringLiteral("output folder"), QStringLiteral("dir"), QStringLiteral("."));
  parser.addOption(langOption);
  parser.addOption(outOption);
  parser.process(app);
  const QString lang = parser.value(langOption) == QLatin1String("bn") ? QStringLiteral("bn") : QStringLiteral("en");
  const bool bengali = lang == QLatin1String("bn");
  const QDir out(parser.value(outOption));
  QDir().mkpath(out.path());

  QTemporaryDir tmp;
  const QString db = tmp.filePath(QStringLiteral("history.db"));
  fillSample(db, bengali);
  QSettings qsettings(tmp.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
  alap::FakeEngineScript script;
  script.reply = bengali ? "পদ্মা, যমুনা আর মেঘনা মিলে পৃথিবীর সবচেয়ে বড় বদ্বীপ তৈরি করেছে। প্রতি বর্ষায় নতুন চর জেগে ওঠে, "
                           "আর সেই পলিমাটিতেই বাংলার ধান, পাট আর মাছের প্রাচুর্য।"
                         : "Together they build the largest delta on Earth. Every monsoon new chars (islands) rise "
                           "from the silt, and that soil feeds Bengal's rice, jute and fish.";
  script.piece_bytes = 6;
  script.n_ctx = 8192;
  script.kv_bytes_per_token = 114688;  // a 1.5B model: 28 layers x 2 KV heads x 128 x 2 (K, V) x 2 bytes... roughly
  AppContext context(std::make_unique<alap::FakeEngine>(script), &qsettings, db, QLocale(QLocale::English, QLocale::UnitedStates));
  context.settings()->overrideLanguage(lang);
  context.settings()->setCacheMode(QStringLiteral("k8"));

  QQmlApplicationEngine qml;
  qml.addImportPath(QStringLiteral("qrc:/"));
  if (!context.loadWindow(qml)) return 1;
  auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().first());
  window->resize(1280, 800);
  QTextStream err(stderr);

  auto save = [&](const QString& name, QQuickItem* crop = nullptr) {
    QImage image = window->grabWindow();
    if (crop) {
      const QRectF r = crop->mapRectToScene(QRectF(0, 0, crop->width(), crop->height()));
      image = image.copy(r.toAlignedRect());
    }
    const QString file = out.filePath(QStringLiteral("%1-%2.png").arg(name, lang));
    if (!image.save(file, "PNG")) err << "alap-screenshots: cannot write " << file << '\n';
    else err << "alap-screenshots: " << file << '\n';
  };

  // The steps, each after the previous one has settled (timers keep the event loop free).
  std::vector<std::function<void()>> steps;
  steps.push_back([&] { context.engine()->loadModel(QStringLiteral("/models/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf")); });
  steps.push_back([&] {
    const auto list = st::Store::open(db.toStdString()).list_conversations();
    for (const auto& c : list)
      if (c.title == (bengali ? "বাংলা ভাষার ইতিহাস" : "Rivers of Bengal")) context.chat()->selectConversation(c.id);
  });
  steps.push_back([&] {
    context.chat()->send(bengali ? QStringLiteral(u"নদীগুলো বদ্বীপ কীভাবে তৈরি করে?")
                                 : QStringLiteral("How do the rivers build the delta?"));
  });
  steps.push_back([&] {});
  steps.push_back([&] { save(QStringLiteral("chat")); });
  steps.push_back([&] {
    if (auto* meter = qobject_cast<QQuickItem*>(findByClass(window, "MemoryPanel"))) save(QStringLiteral("meter"), meter);
    context.chat()->setSearchQuery(bengali ? QStringLiteral(u"ভাষা") : QStringLiteral("delta"));
  });
  steps.push_back([&] { save(QStringLiteral("search")); });
  steps.push_back([&] {
    context.chat()->setSearchQuery(QString());
    QMetaObject::invokeMethod(window, "openModels");
  });
  steps.push_back([&] {
    // The catalog tab: the page has something to show without downloaded models.
    if (QObject* page = window->findChild<QObject*>(QStringLiteral("modelsPage")))
      for (QObject* o : page->findChildren<QObject*>())
        if (o->inherits("QQuickTabBar")) o->setProperty("currentIndex", 1);
  });
  steps.push_back([&] { save(QStringLiteral("models")); });
  steps.push_back([&] {
    closePopups(window);
    if (QObject* settings = findByClass(window, "SettingsPage")) QMetaObject::invokeMethod(settings, "open");
  });
  steps.push_back([&] { save(QStringLiteral("settings")); });
  steps.push_back([&] { QCoreApplication::quit(); });

  size_t next = 0;
  QTimer timer;
  timer.setInterval(700);
  QObject::connect(&timer, &QTimer::timeout, &app, [&] {
    if (next < steps.size()) steps[next++]();
  });
  timer.start();
  return app.exec();
}
