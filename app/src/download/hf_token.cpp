// The access-token file (hf_token.h).
#include "download/hf_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace alap::download {

namespace {

bool validToken(const QString& t) {
  if (t.isEmpty() || t.size() > 1024) return false;
  for (QChar c : t) {
    if (c.unicode() <= 0x20 || c.unicode() >= 0x7F) return false;
  }
  return true;
}

}  // namespace

QString defaultTokenPath() {
  return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) + QStringLiteral("/alap/hf_token");
}

TokenRead readToken(const QString& pathIn, bool useEnvironment) {
  TokenRead r;
  if (useEnvironment) {
    const QString env = qEnvironmentVariable("HF_TOKEN").trimmed();
    if (!env.isEmpty()) {
      if (validToken(env)) {
        r.token = env;
        r.source = QStringLiteral("HF_TOKEN");
      } else {
        r.error = QStringLiteral("HF_TOKEN does not look like an access token");
      }
      return r;
    }
  }
  const QString path = pathIn.isEmpty() ? defaultTokenPath() : pathIn;
  const QByteArray native = QFile::encodeName(path);
  struct stat st {};
  if (::stat(native.constData(), &st) != 0) return r;  // no file: no token
  r.source = path;
  if (!S_ISREG(st.st_mode)) {
    r.error = QStringLiteral("the token file %1 is not a regular file").arg(path);
    return r;
  }
  if (st.st_uid != ::getuid()) {
    r.error = QStringLiteral("the token file %1 belongs to another user; it was not used").arg(path);
    return r;
  }
  if ((st.st_mode & 077) != 0) {
    r.error = QStringLiteral("the token file %1 can be read or written by other users (mode %2); it was not used. "
                             "Fix it with: chmod 600 %1")
                  .arg(path)
                  .arg(QString::number(st.st_mode & 0777, 8));
    return r;
  }
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    r.error = QStringLiteral("cannot read the token file %1: %2").arg(path, f.errorString());
    return r;
  }
  const QString t = QString::fromUtf8(f.read(4096)).trimmed();
  if (t.isEmpty()) return r;
  if (!validToken(t)) {
    r.error = QStringLiteral("the token file %1 does not hold an access token").arg(path);
    return r;
  }
  r.token = t;
  return r;
}

bool writeToken(const QString& tokenIn, const QString& pathIn, QString* error) {
  const QString path = pathIn.isEmpty() ? defaultTokenPath() : pathIn;
  const QString token = tokenIn.trimmed();
  auto failWith = [&](const QString& m) {
    if (error) *error = m;
    return false;
  };
  if (token.isEmpty()) {
    if (QFile::exists(path) && !QFile::remove(path)) return failWith(QStringLiteral("cannot delete %1").arg(path));
    return true;
  }
  if (!validToken(token)) return failWith(QStringLiteral("that does not look like an access token"));
  const QString dir = QFileInfo(path).absolutePath();
  if (!QDir().mkpath(dir)) return failWith(QStringLiteral("cannot create %1").arg(dir));
  const QByteArray tmp = QFile::encodeName(path + QStringLiteral(".tmp"));
  ::unlink(tmp.constData());
  const int fd = ::open(tmp.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return failWith(QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno))));
  const QByteArray data = token.toUtf8() + '\n';
  const bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, data.constData(), size_t(data.size())) == data.size() &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.constData(), QFile::encodeName(path).constData()) != 0) {
    ::unlink(tmp.constData());
    return failWith(QStringLiteral("cannot write %1").arg(path));
  }
  return true;
}

}  // namespace alap::download
