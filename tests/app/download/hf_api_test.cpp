// The Hugging Face API side: search/tree parsing with real-looking and hostile JSON, quantisation
// names and split sets, URLs, safe file names, HfClient against the local server, the token file.
#include <sys/stat.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "download/download_types.h"
#include "download/hf_api.h"
#include "download/hf_client.h"
#include "download/hf_token.h"
#include "test_http_server.h"

using namespace alap::download;

namespace {

const char* kSearch = R"([
 {"_id":"66","id":"Qwen/Qwen2.5-1.5B-Instruct-GGUF","likes":120,"downloads":250000,"private":false,
  "tags":["gguf","chat","en","zh",7],"library_name":"gguf","gated":false,"createdAt":"2024-09-17T00:00:00.000Z"},
 {"id":"meta-llama/Llama-3.2-1B","downloads":"17","likes":null,"gated":"manual"},
 {"id":"../etc/passwd","downloads":1},
 {"downloads":5},
 "not an object",
 {"id":42}
])";

const char* kTree = R"([
 {"type":"file","oid":"a1","size":1519,"path":".gitattributes"},
 {"type":"file","oid":"b2","size":7800,"path":"README.md"},
 {"type":"directory","oid":"c3","size":0,"path":"big"},
 {"type":"file","oid":"d4","size":1117320736,"path":"qwen2.5-1.5b-instruct-q4_k_m.gguf",
  "lfs":{"oid":"6A1A2EB6D15622BF3C96857206351BA97E1AF16C30D7A74EE38970E434E9407E","size":1117320736,"pointerSize":135}},
 {"type":"file","size":1894532128,"path":"qwen2.5-1.5b-instruct-q8_0.gguf","lfs":{"oid":"short","size":1894532128}},
 {"type":"file","size":100,"path":"big/model-BF16-00002-of-00002.gguf","lfs":{"oid":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","size":200}},
 {"type":"file","size":100,"path":"big/model-BF16-00001-of-00002.gguf","lfs":{"oid":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","size":300}},
 {"type":"file","size":100,"path":"IQ4_XS/x-IQ4_XS-00001-of-00003.gguf"},
 {"type":"file","size":5,"path":"../evil.gguf"},
 {"type":"file","size":5,"path":"sub/../../evil.gguf"},
 {"type":"file","size":5,"path":"/abs.gguf"},
 {"type":"file","size":5,"path":"sub/.hidden.gguf"},
 {"type":"file","size":"huge","path":"weird.gguf","lfs":"nope"},
 {"type":"file","path":7}
])";

}  // namespace

class HfApiTest : public QObject {
  Q_OBJECT

 private slots:
  void parsesSearchResults() {
    const auto r = parseSearchResults(kSearch);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value->size(), 2);
    QCOMPARE(r.skipped, 4);
    const HfModelSummary& a = r.value->at(0);
    QCOMPARE(a.id, QStringLiteral("Qwen/Qwen2.5-1.5B-Instruct-GGUF"));
    QCOMPARE(a.downloads, 250000);
    QCOMPARE(a.likes, 120);
    QCOMPARE(a.tags, QStringList({"gguf", "chat", "en", "zh"}));
    QVERIFY(!a.gated);
    const HfModelSummary& b = r.value->at(1);
    QCOMPARE(b.downloads, 17);
    QCOMPARE(b.likes, 0);
    QVERIFY(b.gated);
  }

  void refusesMalformedAnswers_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("empty") << QByteArray() << "not valid JSON";
    QTest::newRow("truncated") << QByteArray(R"([{"id":"a/b")") << "not valid JSON";
    QTest::newRow("object") << QByteArray(R"({"error":"Invalid"})") << "not a JSON array";
    QTest::newRow("string") << QByteArray(R"("x")") << "not valid JSON";
    QTest::newRow("garbage") << QByteArray("\xff\xfe<html>") << "not valid JSON";
  }
  void refusesMalformedAnswers() {
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    const auto s = parseSearchResults(json);
    QVERIFY(!s.ok());
    QVERIFY2(s.error.contains(error), qPrintable(s.error));
    const auto t = parseTree(json);
    QVERIFY(!t.ok());
    QVERIFY2(t.error.contains(error), qPrintable(t.error));
  }

  void refusesHugeAnswers() {
    QByteArray big = "[";
    for (int i = 0; i < 30000; ++i) big += "{},";
    big += "{}]";
    const auto r = parseTree(big);
    QVERIFY(!r.ok());
    QVERIFY(r.error.contains(QStringLiteral("too many entries")));
    HfParseLimits small;
    small.maxBytes = 100;
    QVERIFY(parseSearchResults(QByteArray(200, ' ') + "[]", small).error.contains(QStringLiteral("too large")));
    QVERIFY(parseSearchResults("[]").ok());
    QCOMPARE(parseSearchResults("[]").value->size(), 0);
  }

  void parsesTreeAndSkipsUnsafePaths() {
    const auto r = parseTree(kTree);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QStringList paths;
    for (const HfFile& f : *r.value) paths << f.path;
    QCOMPARE(paths, QStringList({"README.md", "qwen2.5-1.5b-instruct-q4_k_m.gguf", "qwen2.5-1.5b-instruct-q8_0.gguf",
                                 "big/model-BF16-00002-of-00002.gguf", "big/model-BF16-00001-of-00002.gguf",
                                 "IQ4_XS/x-IQ4_XS-00001-of-00003.gguf", "weird.gguf"}));
    QCOMPARE(r.skipped, 6);  // .gitattributes (hidden), ../evil, sub/../../evil, /abs, sub/.hidden, path 7
    const HfFile& q4 = r.value->at(1);
    QCOMPARE(q4.fileName, QStringLiteral("qwen2.5-1.5b-instruct-q4_k_m.gguf"));
    QCOMPARE(q4.size, 1117320736);
    QCOMPARE(q4.sha256, QStringLiteral("6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e"));
    QCOMPARE(q4.quant, QStringLiteral("Q4_K_M"));
    QCOMPARE(r.value->at(2).sha256, QString());  // "short" is not a digest
    QCOMPARE(r.value->at(3).fileName, QStringLiteral("model-BF16-00002-of-00002.gguf"));
    QCOMPARE(r.value->at(3).size, 200);  // lfs.size wins
    QCOMPARE(r.value->at(3).splitIndex, 2);
    QCOMPARE(r.value->at(3).splitCount, 2);
    QCOMPARE(r.value->last().size, 0);  // mistyped size and lfs: kept with size 0
  }

  void quantisationFromFileNames_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("quant");
    QTest::newRow("q4km") << "qwen2.5-1.5b-instruct-q4_k_m.gguf" << "Q4_K_M";
    QTest::newRow("Q8_0") << "Qwen3-0.6B-Q8_0.gguf" << "Q8_0";
    QTest::newRow("iq4xs") << "Llama-3.2-3B-Instruct-IQ4_XS.gguf" << "IQ4_XS";
    QTest::newRow("f16") << "model-f16.gguf" << "F16";
    QTest::newRow("bf16 split") << "model-BF16-00001-of-00003.gguf" << "BF16";
    QTest::newRow("dot") << "tinyllama-1.1b-chat-v1.0.Q5_K_S.gguf" << "Q5_K_S";
    QTest::newRow("iq2xxs") << "m.IQ2_XXS.gguf" << "IQ2_XXS";
    QTest::newRow("q6k") << "m-Q6_K.gguf" << "Q6_K";
    QTest::newRow("q3kl") << "m-q3_k_l.gguf" << "Q3_K_L";
    QTest::newRow("fp16") << "m-fp16.gguf" << "F16";
    QTest::newRow("none") << "model.gguf" << "";
    QTest::newRow("not in word") << "aq4_k_mz.gguf" << "";
    QTest::newRow("version not quant") << "Qwen2.5-7B.gguf" << "";
  }
  void quantisationFromFileNames() {
    QFETCH(QString, name);
    QFETCH(QString, quant);
    QCOMPARE(quantFromFileName(name), quant);
  }

  void runnableQuantisations_data() {
    QTest::addColumn<QString>("quant");
    QTest::addColumn<bool>("runnable");
    for (const char* q : {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_S", "Q3_K_L",
                          "Q4_K_M", "q4_k_s", "Q5_K_M", "Q6_K", "Q8_K_XL", "IQ4_NL", "IQ4_XS", ""}) {
      QTest::newRow(*q != '\0' ? q : "unknown") << QString::fromLatin1(q) << true;
    }
    for (const char* q : {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_M", "IQ3_XXS", "IQ3_M", "IQ4_S", "TQ1_0", "TQ2_0", "MXFP4",
                          "Q4_0_4_4", "Q8_1", "Q6_0"}) {
      QTest::newRow(q) << QString::fromLatin1(q) << false;
    }
  }
  void runnableQuantisations() {
    QFETCH(QString, quant);
    QFETCH(bool, runnable);
    QCOMPARE(quantRunnable(quant), runnable);
  }

  void groupsByQuantAndSplitSet() {
    const auto r = parseTree(kTree);
    const QList<HfFileGroup> g = groupGgufFiles(*r.value);
    QCOMPARE(g.size(), 5);
    // Sorted by quant: "" (weird.gguf), BF16, IQ4_XS, Q4_K_M, Q8_0.
    QCOMPARE(g[0].quant, QString());
    QCOMPARE(g[1].quant, QStringLiteral("BF16"));
    QCOMPARE(g[1].name, QStringLiteral("model-BF16.gguf"));
    QCOMPARE(g[1].files.size(), 2);
    QCOMPARE(g[1].files[0].splitIndex, 1);
    QCOMPARE(g[1].files[1].splitIndex, 2);
    QCOMPARE(g[1].totalSize, 500);
    QVERIFY(g[1].complete);
    QCOMPARE(g[2].quant, QStringLiteral("IQ4_XS"));
    QVERIFY(!g[2].complete);  // 1 of 3 parts
    QCOMPARE(g[3].quant, QStringLiteral("Q4_K_M"));
    QCOMPARE(g[3].files.size(), 1);
    QVERIFY(g[3].complete);
  }

  void splitNames() {
    QCOMPARE(splitFromFileName(QStringLiteral("a-00002-of-00005.gguf")), std::make_pair(2, 5));
    QCOMPARE(splitFromFileName(QStringLiteral("a-00006-of-00005.gguf")), std::make_pair(0, 0));
    QCOMPARE(splitFromFileName(QStringLiteral("a.gguf")), std::make_pair(0, 0));
  }

  void safeFileNames() {
    QString why;
    QCOMPARE(sanitizeFileName(QStringLiteral("dir/model.gguf")), QStringLiteral("model.gguf"));
    QVERIFY(sanitizeFileName(QStringLiteral("../model.gguf"), &why).isEmpty());
    QVERIFY(why.contains(QStringLiteral("'..'")));
    QVERIFY(sanitizeFileName(QStringLiteral("a/../../b.gguf")).isEmpty());
    QVERIFY(sanitizeFileName(QStringLiteral(".bashrc")).isEmpty());
    QVERIFY(sanitizeFileName(QStringLiteral("a\\b.gguf")).isEmpty());
    QVERIFY(sanitizeFileName(QStringLiteral("a\nb.gguf")).isEmpty());
    QVERIFY(sanitizeFileName(QStringLiteral("dir/")).isEmpty());
    QVERIFY(sanitizeFileName(QString()).isEmpty());
  }

  void urls() {
    QCOMPARE(searchUrl(QStringLiteral("https://huggingface.co"), QStringLiteral("qwen 2.5&x"), 20).toString(QUrl::FullyEncoded),
             QStringLiteral("https://huggingface.co/api/models?search=qwen%202.5%26x&filter=gguf&sort=downloads&direction=-1&limit=20"));
    QCOMPARE(treeUrl(QStringLiteral("https://hf-mirror.com"), QStringLiteral("Qwen/Qwen3-4B-GGUF")).toString(),
             QStringLiteral("https://hf-mirror.com/api/models/Qwen/Qwen3-4B-GGUF/tree/main?recursive=true"));
    QCOMPARE(resolveUrl(QStringLiteral("https://huggingface.co"), QStringLiteral("a/b"), QStringLiteral("sub/m q.gguf"))
                 .toString(QUrl::FullyEncoded),
             QStringLiteral("https://huggingface.co/a/b/resolve/main/sub/m%20q.gguf"));
    QVERIFY(isValidRepoId(QStringLiteral("Qwen/Qwen2.5-0.5B-Instruct-GGUF")));
    QVERIFY(!isValidRepoId(QStringLiteral("../x")));
    QVERIFY(!isValidRepoId(QStringLiteral("a/b/c")));
    QVERIFY(!isValidRepoId(QStringLiteral("a/..b")));
  }

  void endpointFromEnvironment() {
    qputenv("HF_ENDPOINT", "https://hf-mirror.example/");
    QCOMPARE(defaultEndpoint(), QStringLiteral("https://hf-mirror.example"));
    qunsetenv("HF_ENDPOINT");
    QCOMPARE(defaultEndpoint(), QStringLiteral("https://huggingface.co"));
  }

  void allowedUrls() {
    QVERIFY(isAllowedUrl(QUrl(QStringLiteral("https://huggingface.co/x"))));
    QVERIFY(isAllowedUrl(QUrl(QStringLiteral("http://127.0.0.1:8080/x"))));
    QVERIFY(isAllowedUrl(QUrl(QStringLiteral("http://[::1]:8080/x"))));
    QVERIFY(isAllowedUrl(QUrl(QStringLiteral("http://localhost/x"))));
    QVERIFY(!isAllowedUrl(QUrl(QStringLiteral("http://huggingface.co/x"))));
    QVERIFY(!isAllowedUrl(QUrl(QStringLiteral("file:///etc/passwd"))));
  }

  void clientAgainstLocalServer() {
    alap::test::TestHttpServer server;
    QVERIFY(server.start());
    auto& s = server.route("/api/models");
    s.body = kSearch;
    s.contentType = "application/json";
    server.route("/api/models/Qwen/Qwen2.5-1.5B-Instruct-GGUF/tree/main").body = kTree;
    server.route("/api/models/bad/json/tree/main").body = "{";
    HfClient client;
    client.setEndpoint(server.base() + QStringLiteral("/"));
    QSignalSpy found(&client, &HfClient::searchFinished);
    QSignalSpy files(&client, &HfClient::filesFinished);
    QSignalSpy failed(&client, &HfClient::requestFailed);
    const quint64 id1 = client.search(QStringLiteral("qwen"), 5);
    QTRY_COMPARE(found.count(), 1);
    QCOMPARE(found[0][0].toULongLong(), id1);
    QCOMPARE(found[0][1].value<QList<HfModelSummary>>().size(), 2);
    QCOMPARE(server.requests[0].target, QByteArray("/api/models?search=qwen&filter=gguf&sort=downloads&direction=-1&limit=5"));
    client.listFiles(QStringLiteral("Qwen/Qwen2.5-1.5B-Instruct-GGUF"));
    QTRY_COMPARE(files.count(), 1);
    QCOMPARE(files[0][3].value<QList<HfFileGroup>>().size(), 5);
    QCOMPARE(client.fileUrl(QStringLiteral("Qwen/Qwen2.5-1.5B-Instruct-GGUF"), QStringLiteral("m.gguf")),
             server.url(QStringLiteral("/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/m.gguf")));
    client.listFiles(QStringLiteral("nobody/nothing"));
    QTRY_COMPARE(failed.count(), 1);
    QCOMPARE(failed[0][1].value<ErrorKind>(), ErrorKind::notFound);
    client.listFiles(QStringLiteral("bad/json"));
    QTRY_COMPARE(failed.count(), 2);
    QVERIFY(failed[1][2].toString().contains(QStringLiteral("not valid JSON")));
    client.listFiles(QStringLiteral("../etc"));
    QTRY_COMPARE(failed.count(), 3);
    QCOMPARE(failed[2][1].value<ErrorKind>(), ErrorKind::invalid);
  }

  void tokenFileIsPrivate() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("cfg/alap/hf_token"));
    qunsetenv("HF_TOKEN");
    QCOMPARE(readToken(path).token, QString());  // no file: no token, no error
    QVERIFY(readToken(path).error.isEmpty());
    QString error;
    QVERIFY2(writeToken(QStringLiteral("hf_abcDEF123"), path, &error), qPrintable(error));
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0600);
    QCOMPARE(readToken(path).token, QStringLiteral("hf_abcDEF123"));
    // Readable by others: refused, with the fix in the message.
    QVERIFY(::chmod(QFile::encodeName(path).constData(), 0644) == 0);
    const TokenRead r = readToken(path);
    QCOMPARE(r.token, QString());
    QVERIFY(r.error.contains(QStringLiteral("chmod 600")));
    // Rewriting restores 0600; $HF_TOKEN wins over the file; an empty token deletes the file.
    QVERIFY(writeToken(QStringLiteral("hf_new"), path));
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0600);
    qputenv("HF_TOKEN", "hf_env");
    QCOMPARE(readToken(path).token, QStringLiteral("hf_env"));
    QCOMPARE(readToken(path, false).token, QStringLiteral("hf_new"));
    qunsetenv("HF_TOKEN");
    QVERIFY(!writeToken(QStringLiteral("has space"), path));
    QVERIFY(writeToken(QString(), path));
    QVERIFY(!QFile::exists(path));
  }
};

QTEST_GUILESS_MAIN(HfApiTest)
#include "hf_api_test.moc"
