#!/usr/bin/env bash
# check_tgz.sh BUILD_DIR NAME: runs cpack -G TGZ in the build tree, checks that the tarball holds
# the same tree as the .deb under NAME/ and that its binaries run from an unpacked copy.
set -euo pipefail
build=$1 name=$2
fail() { echo "FAIL: $*"; exit 1; }

cd "$build"
rm -f "packages/$name.tar.gz"
cpack -G TGZ --config CPackConfig.cmake
tgz="$build/packages/$name.tar.gz"
[ -f "$tgz" ] || fail "cpack made no $tgz"
listing=$(tar -tzf "$tgz")
need=(bin/alap bin/alap-cli share/applications/org.alap.Alap.desktop share/metainfo/org.alap.Alap.metainfo.xml
      share/icons/hicolor/scalable/apps/org.alap.Alap.svg share/doc/alap/LICENSE share/doc/alap/PACKAGING.md)
for size in 16 22 24 32 48 64 128 256 512; do
  need+=("share/icons/hicolor/${size}x${size}/apps/org.alap.Alap.png")
done
for p in "${need[@]}"; do
  grep -qxF "$name/$p" <<<"$listing" || fail "$tgz lacks $name/$p"
done
if grep -v "^$name/" <<<"$listing" | grep -q .; then fail "$tgz holds paths outside $name/"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$tgz" -C "$tmp"
out=$(cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp" "$tmp/$name/bin/alap" --version) || fail "alap --version: $out"
[[ "$out" == "alap "* ]] || fail "unpacked alap --version printed '$out'"
out=$(cd "$tmp" && env -i PATH=/usr/bin:/bin "$tmp/$name/bin/alap-cli" --version) || fail "alap-cli --version: $out"
[[ "$out" == "alap-cli "* ]] || fail "unpacked alap-cli --version printed '$out'"
echo "packaging: tgz ok ($(stat -c %s "$tgz") bytes)"
