// The driver of app_kill_test: the app's own AppContext stack (ChatController, StoreWorker,
// EngineController) on a FakeEngine that streams slowly, sending message after message into the
// database given as argv[1] until it is killed. Prints "ready" once, then one line
// "committed <id> <role>" per message the store has committed (user messages when their insert
// returned, answers when their final "complete" update returned), flushed before anything else.
// With "import" as argv[2] it imports a conversation of kImportMessages messages (JSON, through
// StoreWorker like the app) again and again instead, printing "imported <conversation id>".
#include <QGuiApplication>
#include <QSettings>
#include <QTextStream>
#include <QTimer>
#include <cstdio>
#include <functional>
#include <string>

#include "app_context.h"
#include "controllers/chat_controller.h"
#include "core/engine/fake_engine.h"
#include "engine/engine_controller.h"
#include "kill_test_reply.h"
#include "models/message_list_model.h"
#include "store/store_worker.h"

using namespace alap::app;

namespace {
// {"format":"alap-conversation","version":1,"title":"import",...} with kImportMessages messages.
std::string importJson() {
  std::string json = R"({"format":"alap-conversation","version":1,"title":"import","system_prompt":"",)"
                     R"("created_at":1764460800000,"messages":[)";
  for (int i = 0; i < kImportMessages; ++i) {
    if (i) json += ',';
    json += R"({"role":")";
    json += i % 2 ? "assistant" : "user";
    json += R"(","content":"imported message )" + std::to_string(i) + R"( — আমদানি করা বার্তা","status":"complete",)";
    json += R"("created_at":)" + std::to_string(1764460800000 + i) + R"(,"model":""})";
  }
  return json + "]}";
}
}  // namespace

int main(int argc, char* argv[]) {
  QGuiApplication app(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: app_kill_driver DATABASE [import]\n");
    return 2;
  }
  const QString db = QString::fromLocal8Bit(argv[1]);
  QSettings qsettings(db + QStringLiteral(".ini"), QSettings::IniFormat);
  alap::FakeEngineScript script;
  script.reply = kKillTestReply;
  script.piece_bytes = 3;
  script.piece_delay = std::chrono::milliseconds(1);
  AppContext context(std::make_unique<alap::FakeEngine>(script), &qsettings, db, QLocale::c());
  ChatController* chat = context.chat();
  MessageListModel* messages = chat->messages();

  auto line = [](const QString& text) {
    std::fputs(text.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  };
  int sent = 0;
  auto sendNext = [&] {
    chat->send(QStringLiteral(u"kill test message %1 — বার্তা").arg(++sent));
  };
  QObject::connect(messages, &QAbstractItemModel::dataChanged, &app,
                   [&](const QModelIndex& from, const QModelIndex&, const QList<int>& roles) {
                     if (!roles.contains(MessageListModel::IdRole)) return;
                     const MessageRow& row = messages->at(from.row());
                     if (row.role == QLatin1String("user") && row.id != 0)
                       line(QStringLiteral("committed %1 user").arg(row.id));
                   });
  QObject::connect(chat, &ChatController::answerCommitted, &app, [&](qint64 id, const QString& status) {
    if (status == QLatin1String("complete")) line(QStringLiteral("committed %1 assistant").arg(id));
    QTimer::singleShot(0, &app, sendNext);
  });
  if (argc >= 3 && QByteArray(argv[2]) == "import") {
    const std::string json = importJson();
    std::function<void()> importNext;
    importNext = [&] {
      context.store()->post([json](alap::store::Store& s) { return s.import_json(json); }, &app,
                            [&](alap::store::Id id) {
                              line(QStringLiteral("imported %1").arg(id));
                              importNext();
                            });
    };
    QObject::connect(context.store(), &StoreWorker::opened, &app, [&] {
      line(QStringLiteral("ready"));
      importNext();
    });
    return app.exec();
  }
  QObject::connect(context.engine(), &EngineController::modelLoadedChanged, &app, [&] {
    line(QStringLiteral("ready"));
    sendNext();
  });
  QObject::connect(context.store(), &StoreWorker::opened, &app,
                   [&] { context.engine()->loadModel(QStringLiteral("/models/fake.gguf")); });
  return app.exec();
}
