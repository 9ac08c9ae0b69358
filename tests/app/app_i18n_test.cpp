// Bengali first: the interface language switches at run time without a restart (a visible QML
// string, C++ strings and Bengali digits all change, the choice persists), numbers are formatted
// in the interface's locale everywhere, the bundled Noto Sans Bengali covers Bengali text, the
// streamed answer never shows a split grapheme cluster, and "answer in Bengali" reaches the engine.
#include <QFontDatabase>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QRawFont>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBoundaryFinder>
#include <QTextLayout>
#include <QtQml/QQmlExtensionPlugin>
#include <QtTest>

#include "app_context.h"
#include "controllers/app_settings.h"
#include "controllers/chat_controller.h"
#include "controllers/memory_meter.h"
#include "core/engine/fake_engine.h"
#include "engine/engine_controller.h"
#include "i18n/localizer.h"
#include "models/grapheme_holdback.h"
#include "models/message_list_model.h"
#include "store/store_worker.h"

Q_IMPORT_QML_PLUGIN(AlapPlugin)

using namespace alap::app;

namespace {
const QStringList kBengaliSamples = {QStringLiteral(u"আলাপ"), QStringLiteral(u"বাংলা ভাষা"), QStringLiteral(u"ক্ষ"),
                                     QStringLiteral(u"জ্ঞ"), QStringLiteral(u"স্ত্র")};

// Code points of s, each as its own string (surrogate pairs kept whole).
QStringList codePoints(const QString& s) {
  QStringList out;
  for (qsizetype i = 0; i < s.size(); ++i) {
    if (s[i].isHighSurrogate() && i + 1 < s.size()) {
      out << s.mid(i, 2);
      ++i;
    } else {
      out << s.mid(i, 1);
    }
  }
  return out;
}

bool isGraphemeBoundary(const QString& text, qsizetype pos) {
  QTextBoundaryFinder f(QTextBoundaryFinder::Grapheme, text);
  f.setPosition(pos);
  return f.isAtBoundary();
}
}  // namespace

class I18nTest : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

 private slots:
  void switchesLanguageWithoutRestart() {
    QSettings qsettings(m_dir.filePath(QStringLiteral("switch.ini")), QSettings::IniFormat);
    AppContext context(std::make_unique<alap::FakeEngine>(), &qsettings, m_dir.filePath(QStringLiteral("a.db")),
                       QLocale(QLocale::English, QLocale::UnitedStates));
    QCOMPARE(context.settings()->language(), QStringLiteral("en"));  // follows the (English) system locale

    QQmlApplicationEngine qml;
    qml.addImportPath(QStringLiteral("qrc:/"));
    QVERIFY(context.loadWindow(qml));
    auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().first());
    QVERIFY(window);
    auto* send = window->findChild<QQuickItem*>(QStringLiteral("sendButton"));
    QVERIFY(send);
    QCOMPARE(send->property("text").toString(), QStringLiteral("Send"));
    QCOMPARE(context.settings()->formatNumber(1234567, 0), QStringLiteral("1,234,567"));
    // An answer with its stats line ("8 tokens · …"), formatted when the row was made.
    QSignalSpy opened(context.store(), &StoreWorker::opened);
    QVERIFY(opened.count() > 0 || opened.wait(5000));
    QSignalSpy loaded(context.engine(), &EngineController::modelLoadedChanged);
    context.engine()->loadModel(QStringLiteral("/models/fake.gguf"));
    QVERIFY(loaded.wait(5000));
    QSignalSpy committed(context.chat(), &ChatController::answerCommitted);
    QVERIFY(context.chat()->send(QStringLiteral("Hello")));
    QVERIFY(committed.wait(5000));
    QTRY_VERIFY(context.chat()->messages()->rowCount() == 2 && !context.chat()->messages()->at(1).statsText.isEmpty());
    QVERIFY(context.chat()->messages()->at(1).statsText.contains(QStringLiteral(" tokens")));
    const QString sendHint = context.chat()->composerHint();
    QSignalSpy hintChanged(context.chat(), &ChatController::canSendChanged);
    QSignalSpy meterChanged(context.meter(), &MemoryMeter::changed);

    // The Settings page's language box: choosing বাংলা (index 1) switches at once.
    auto* languageBox = window->findChild<QObject*>(QStringLiteral("languageBox"));
    QVERIFY(languageBox);
    QCOMPARE(languageBox->property("currentIndex").toInt(), 0);
    QVERIFY(QMetaObject::invokeMethod(languageBox, "activated", Q_ARG(int, 1)));
    QCOMPARE(context.settings()->language(), QStringLiteral("bn"));
    QTRY_COMPARE(send->property("text").toString(), QStringLiteral(u"পাঠান"));
    QCOMPARE(context.settings()->formatNumber(1234567, 0), QStringLiteral(u"১২,৩৪,৫৬৭"));
    QCOMPARE(QLocale().toString(1234567.0, 'f', 0), QStringLiteral(u"১২,৩৪,৫৬৭"));
    QCOMPARE(context.meter()->bytes(1536), QStringLiteral(u"১.৫ KiB"));
    QVERIFY(context.chat()->composerHint() != sendHint);
    // The stats line of the shown answer again, now in Bengali digits and words.
    QTRY_VERIFY_WITH_TIMEOUT(context.chat()->messages()->rowCount() == 2 &&
                                 context.chat()->messages()->at(1).statsText.contains(QStringLiteral(u"টোকেন")),
                             5000);
    QVERIFY(!context.chat()->messages()->at(1).statsText.contains(QRegularExpression(QStringLiteral("[0-9] "))));
    QVERIFY(hintChanged.count() > 0);  // QML re-reads the C++ texts
    QVERIFY(meterChanged.count() > 0);

    // Persisted: a new start with an English system locale is still Bengali.
    AppSettings again(&qsettings);
    again.setSystemLanguage(QStringLiteral("en"));
    QCOMPARE(again.language(), QStringLiteral("bn"));

    context.settings()->setLanguage(QStringLiteral("en"));
    QTRY_COMPARE(send->property("text").toString(), QStringLiteral("Send"));
    QCOMPARE(context.settings()->formatNumber(1234567, 0), QStringLiteral("1,234,567"));
  }

  void firstStartFollowsSystemLocaleAndLangOverrides() {
    QSettings qsettings(m_dir.filePath(QStringLiteral("first.ini")), QSettings::IniFormat);
    AppSettings settings(&qsettings);
    settings.setSystemLanguage(AppSettings::languageOf(QLocale(QStringLiteral("bn_IN"))));
    QCOMPARE(settings.language(), QStringLiteral("bn"));
    settings.overrideLanguage(QStringLiteral("en"));  // --lang en: this run only
    QCOMPARE(settings.language(), QStringLiteral("en"));
    QVERIFY(!qsettings.contains(QStringLiteral("ui/language")));
    QCOMPARE(AppSettings::languageOf(QLocale(QStringLiteral("de_DE"))), QStringLiteral("en"));
  }

  void numbersUseBengaliDigitsEverywhere() {
    Localizer localizer(QLocale::c());
    QVERIFY(localizer.apply(QStringLiteral("bn")));
    const QString stats = MessageListModel::formatStats(
        QStringLiteral(R"({"tokens":1234,"tokens_per_s":14.25,"ttft_ms":310,"cache_mode":"k8"})"));
    QVERIFY2(stats.contains(QStringLiteral(u"১,২৩৪")), qPrintable(stats));
    QVERIFY2(stats.contains(QStringLiteral(u"০.৩১")), qPrintable(stats));
    QVERIFY2(!QString(stats).remove(QStringLiteral("k8")).contains(QRegularExpression(QStringLiteral("[0-9]"))), qPrintable(stats));

    MemoryMeter meter(localizer.locale());
    alap::ModelInfo info;
    info.n_layer = 2;
    info.n_head_kv = 2;
    info.head_dim = 64;
    info.n_ctx = 4096;
    info.cache_mode = alap::CacheMode::k8;
    info.weights_bytes = 123456789;
    meter.setModel(info);
    meter.setContextUse(1234, 4096);
    QVERIFY2(meter.contextText().contains(QStringLiteral(u"১,২৩৪")) && meter.contextText().contains(QStringLiteral(u"৪,০৯৬")),
             qPrintable(meter.contextText()));
    QVERIFY2(meter.weightsText().startsWith(QStringLiteral(u"১১৭.৭")), qPrintable(meter.weightsText()));
    alap::MemoryReport report;
    report.kv_fp16_bytes = 1000;
    report.kv_bytes = 750;
    report.device_free_bytes = 1 << 30;
    meter.setReport(report);
    QVERIFY2(meter.savingText().contains(QStringLiteral(u"২৫")), qPrintable(meter.savingText()));
    for (const QVariant& row : meter.modeCapacity()) {
      const QString t = row.toMap().value(QStringLiteral("tokensText")).toString();
      QVERIFY2(!t.contains(QRegularExpression(QStringLiteral("[0-9]"))), qPrintable(t));
    }
    const QDateTime date(QDate(2026, 11, 30), QTime(14, 5));
    const QString dateText = formatDateTime(date);  // what the conversation list shows
    QCOMPARE(dateText, QStringLiteral(u"৩০/১১/২৬ ১৪:০৫"));
    QVERIFY(localizer.apply(QStringLiteral("en")));
    QCOMPARE(QLocale().toString(1234567.0, 'f', 0), QStringLiteral("1234567"));  // back to the given (C) locale
  }

  void bundledFontCoversBengali() {
    const QString family = loadBundledFonts();
    QCOMPARE(family, QStringLiteral("Noto Sans Bengali"));
    QVERIFY(QGuiApplication::font().families().contains(family));
    const QRawFont raw = QRawFont::fromFont(QFont(family));
    QVERIFY(raw.isValid());
    QFontMetrics metrics((QFont(family)));
    for (const QString& sample : kBengaliSamples) {
      for (const QString& cp : codePoints(sample)) {
        const char32_t ucs4 = cp.toUcs4().value(0);
        if (ucs4 == U' ') continue;
        QVERIFY2(raw.supportsCharacter(ucs4), qPrintable(sample));
        QVERIFY2(metrics.inFontUcs4(ucs4), qPrintable(sample));
      }
      // What Qt resolves for the application font: shaped glyphs, none missing (glyph 0 is .notdef).
      QTextLayout layout(sample, QGuiApplication::font());
      layout.beginLayout();
      layout.createLine();
      layout.endLayout();
      const auto runs = layout.glyphRuns();
      QVERIFY(!runs.isEmpty());
      for (const QGlyphRun& run : runs) {
        for (quint32 glyph : run.glyphIndexes()) QVERIFY2(glyph != 0, qPrintable(sample));
        if (run.rawFont().supportsCharacter(U'\u0995'))
          QCOMPARE(run.rawFont().familyName(), family);
      }
    }
  }

  void streamNeverShowsBrokenCluster() {
    const QString text = QStringLiteral(u"আলাপ: ক্ষমা, জ্ঞান আর স্ত্রী। বাংলা ভাষা 👍🏽!");
    const QStringList cps = codePoints(text);
    // Every code-point split: chunks of 1, 2 and 3 code points, and each single split point.
    QList<QStringList> streams;
    for (int step : {1, 2, 3}) {
      QStringList chunks;
      for (qsizetype i = 0; i < cps.size(); i += step) chunks << cps.mid(i, step).join(QString());
      streams << chunks;
    }
    for (qsizetype cut = 1; cut < cps.size(); ++cut)
      streams << QStringList{cps.mid(0, cut).join(QString()), cps.mid(cut).join(QString())};
    for (const QStringList& chunks : streams) {
      MessageListModel model;
      const int row = model.append({0, QStringLiteral("assistant"), {}, QStringLiteral("streaming"), {}, {}, {}});
      for (const QString& chunk : chunks) {
        model.appendStreamText(row, chunk);
        const QString shown = model.at(row).content;
        QVERIFY(text.startsWith(shown));
        QVERIFY2(isGraphemeBoundary(text, shown.size()), qPrintable(shown));
        QVERIFY2(!GraphemeHoldback::endsInJoiner(shown), qPrintable(shown));  // never ক্ alone
        QVERIFY(!shown.endsWith(QStringLiteral(u"ক্")));
      }
      model.endStream(row);
      QCOMPARE(model.at(row).content, text);
    }
    // The conjunct is held back whole: ক, ্ and ষ show nothing until the stream moves on.
    GraphemeHoldback h;
    QCOMPARE(h.push(QStringLiteral(u"ক")), QString());
    QCOMPARE(h.push(QStringLiteral(u"্")), QString());
    QCOMPARE(h.push(QStringLiteral(u"ষ")), QString());
    QCOMPARE(h.push(QStringLiteral(u"মা")), QStringLiteral(u"ক্ষ"));
    QCOMPARE(h.flush(), QStringLiteral(u"মা"));
  }

  void answerInBengaliReachesTheEngine() {
    QSettings qsettings(m_dir.filePath(QStringLiteral("answer.ini")), QSettings::IniFormat);
    alap::FakeEngineScript script;
    script.reply = "ঠিক আছে।";
    auto engine = std::make_unique<alap::FakeEngine>(script);
    alap::FakeEngine* fake = engine.get();
    AppContext context(std::move(engine), &qsettings, m_dir.filePath(QStringLiteral("answer.db")), QLocale::c());
    QSignalSpy opened(context.store(), &StoreWorker::opened);
    QVERIFY(opened.wait(5000));
    QSignalSpy loaded(context.engine(), &EngineController::modelLoadedChanged);
    context.engine()->loadModel(QStringLiteral("/models/fake.gguf"));
    QVERIFY(loaded.wait(5000));
    ChatController* chat = context.chat();
    QSignalSpy committed(chat, &ChatController::answerCommitted);

    QVERIFY(!chat->answerInBengali());
    QVERIFY(chat->send(QStringLiteral("Hello")));
    QVERIFY(committed.wait(5000));
    QVERIFY(!QString::fromStdString(fake->requests().back().system_prompt).contains(ChatController::bengaliInstruction()));

    chat->setSystemPrompt(QStringLiteral("Be brief."));
    chat->setAnswerInBengali(true);  // the composer's toggle, for this conversation
    QVERIFY(chat->send(QStringLiteral("Tell me about rivers")));
    QVERIFY(committed.wait(5000));
    const std::string system = fake->requests().back().system_prompt;
    QCOMPARE(QString::fromStdString(system), QStringLiteral("Be brief.\n\n") + ChatController::bengaliInstruction());
    QVERIFY(ChatController::bengaliInstruction().startsWith(QStringLiteral(u"সব উত্তর বাংলা")));

    // Per conversation: a new chat starts from the setting (off), the old one keeps its toggle.
    const qint64 first = chat->currentConversationId();
    chat->newConversation();
    QVERIFY(!chat->answerInBengali());
    context.settings()->setAnswerInBengali(true);
    chat->newConversation();
    QVERIFY(chat->answerInBengali());
    QVERIFY(chat->send(QStringLiteral("নদী")));
    QVERIFY(committed.wait(5000));
    QCOMPARE(QString::fromStdString(fake->requests().back().system_prompt), ChatController::bengaliInstruction());
    const qint64 second = chat->currentConversationId();
    chat->setAnswerInBengali(false);
    chat->selectConversation(first);
    QTRY_COMPARE(chat->currentConversationId(), first);
    QVERIFY(chat->answerInBengali());
    chat->selectConversation(second);
    QTRY_COMPARE(chat->currentConversationId(), second);
    QVERIFY(!chat->answerInBengali());
  }
};

QTEST_MAIN(I18nTest)
#include "app_i18n_test.moc"
