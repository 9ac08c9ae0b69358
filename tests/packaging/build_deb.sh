#!/usr/bin/env bash
# build_deb.sh SOURCE_DIR BUILD_DIR VERSION: runs cpack -G DEB in the build tree (the ctest fixture that the
# install test needs) and checks the .deb without installing it: file name, every path the
# package must hold, the control fields, the Depends (shlibdeps plus the QML runtime modules,
# the SQLite driver and the Bengali font) and that no binary points back into the build tree.
set -euo pipefail
source=$1 build=$2 version=$3
fail() { echo "FAIL: $*"; exit 1; }
start=$(date +%s%N)

cd "$build"
rm -f "packages/alap_${version}_amd64.deb"
cpack -G DEB --config CPackConfig.cmake
deb="$build/packages/alap_${version}_amd64.deb"
[ -f "$deb" ] || fail "cpack made no $deb"
echo "packaging: made $deb ($(stat -c %s "$deb") bytes) in $(( ($(date +%s%N) - start) / 1000000 )) ms"

listing=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
need=(/usr/bin/alap /usr/bin/alap-cli
      /usr/share/applications/org.alap.Alap.desktop
      /usr/share/metainfo/org.alap.Alap.metainfo.xml
      /usr/share/icons/hicolor/scalable/apps/org.alap.Alap.svg
      /usr/share/doc/alap/copyright)
for size in 16 22 24 32 48 64 128 256 512; do
  need+=("/usr/share/icons/hicolor/${size}x${size}/apps/org.alap.Alap.png")
done
for p in "${need[@]}"; do
  grep -qxF "$p" <<<"$listing" || fail "$deb lacks $p"
done
# Nothing outside /usr (no /usr/local, no build paths).
if grep -vE '^/(usr(/.*)?)?/?$' <<<"$listing" | grep -q .; then
  fail "$deb holds paths outside /usr: $(grep -vE '^/(usr(/.*)?)?/?$' <<<"$listing" | head -5)"
fi
grep -q '^/usr/local' <<<"$listing" && fail "$deb holds /usr/local paths"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = alap ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)'"
[ "$(field Architecture)" = amd64 ] || fail "Architecture is '$(field Architecture)'"
[ "$(field Section)" = misc ] || fail "Section is '$(field Section)'"
[ "$(field Priority)" = optional ] || fail "Priority is '$(field Priority)'"
[[ "$(field Maintainer)" == *"<"*"@"*">" ]] || fail "Maintainer is '$(field Maintainer)'"
[ -z "$(field Homepage)" ] || fail "Homepage should be absent, is '$(field Homepage)'"
desc=$(field Description)
[ "$(wc -l <<<"$desc")" -ge 2 ] || fail "Description has no long part: $desc"
grep -qF ';' <<<"$desc" && fail "Description holds a ';' (a CMake list was joined): $desc"
depends=$(field Depends)
echo "packaging: Depends: $depends"
# has_dep PKG: Depends names PKG (with or without a version).
has_dep() { tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//' | grep -qxF "$1"; }
# From dpkg-shlibdeps (ELF NEEDED of alap and alap-cli) ...
for pkg in libc6 libstdc++6 libqt6core6 libqt6gui6 libqt6qml6 libqt6quick6; do
  has_dep "$pkg" || fail "Depends lacks $pkg (shlibdeps)"
done
# ... and the run-time modules no ELF file names: the indirect ones by name, and the package of
# every module app/qml imports, found from its qmldir, so a new import cannot be forgotten.
for pkg in qml6-module-qtquick-templates qml6-module-qtquick-window qml6-module-qtqml \
           qml6-module-qtqml-models qml6-module-qtqml-workerscript qml6-module-qt-labs-folderlistmodel \
           fonts-noto-core; do
  has_dep "$pkg" || fail "Depends lacks $pkg"
done
qmldir_root=$(qtpaths6 --query QT_INSTALL_QML 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/qml)
imports=$(find "$source/app/qml" -name '*.qml' -exec grep -hoE '^import +[A-Za-z][A-Za-z0-9.]*' {} + \
          | awk '{print $2}' | sort -u | grep -vx Alap)
for uri in $imports; do
  qmldir="$qmldir_root/${uri//.//}/qmldir"
  [ -f "$qmldir" ] || fail "app/qml imports $uri, which has no $qmldir on this machine"
  pkg=$(dpkg -S "$qmldir" | cut -d: -f1)
  has_dep "$pkg" || fail "app/qml imports $uri from $pkg, which Depends lacks"
  echo "packaging: import $uri -> $pkg"
done

# The packed binaries must not look into the build tree for libraries.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
for bin in alap alap-cli; do
  if readelf -d "$tmp/usr/bin/$bin" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
    fail "/usr/bin/$bin has a RUNPATH into the build tree"
  fi
done
echo "packaging: deb ok"
