#!/usr/bin/env bash
# install_deb.sh DEB MAKE_TINY_GGUF: installs the .deb with apt on this machine (only as root
# with CI=true: it changes /usr), then runs the installed alap --version, alap-cli inspect on a
# tiny GGUF and alap offscreen, from a bare environment that knows nothing of the build tree,
# and removes the package again. Anywhere else it skips (exit 77).
set -euo pipefail
deb=$(realpath "$1") make_gguf=$2
fail() { echo "FAIL: $*"; exit 1; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

if [ "$(id -u)" -ne 0 ] || [ "${CI:-}" != true ]; then
  echo "SKIP: installs into the real /usr, so it runs only as root with CI=true (uid $(id -u), CI='${CI:-}')"
  exit 77
fi
command -v apt-get >/dev/null || { echo "SKIP: no apt-get"; exit 77; }
if dpkg-query -W -f='${Status}' alap 2>/dev/null | grep -q 'install ok installed'; then
  fail "a package alap is already installed here; remove it first (apt-get remove alap)"
fi

tmp=$(mktemp -d)
installed=0
cleanup() {
  if [ $installed -eq 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq alap >/dev/null || echo "WARNING: apt-get remove alap failed"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$make_gguf" "$tmp/tiny.gguf"

t=$(date +%s%N)
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb"
installed=1
echo "packaging: apt-get install took $(ms_since "$t") ms"
dpkg -L alap | grep -qx /usr/bin/alap || fail "dpkg -L alap does not list /usr/bin/alap"

# A bare environment: system PATH only, a fresh HOME and XDG folders, no Qt or loader variables.
mkdir -p "$tmp/home" "$tmp/run"
chmod 700 "$tmp/run"
run() {
  (cd "$tmp" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$tmp/home" XDG_RUNTIME_DIR="$tmp/run" \
    LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen timeout 60 "$@")
}
[ "$(run sh -c 'command -v alap')" = /usr/bin/alap ] || fail "alap on PATH is not /usr/bin/alap"
for bin in alap alap-cli; do
  if ldd "/usr/bin/$bin" | grep -q 'not found'; then fail "/usr/bin/$bin: $(ldd "/usr/bin/$bin" | grep 'not found')"; fi
done

out=$(run alap --version) || fail "alap --version exited $?: $out"
echo "$out"
[ "$out" = "alap $(dpkg-query -W -f='${Version}' alap)" ] || fail "alap --version printed '$out'"

out=$(run alap-cli --version) || fail "alap-cli --version exited $?: $out"
[ "$out" = "alap-cli $(dpkg-query -W -f='${Version}' alap)" ] || fail "alap-cli --version printed '$out'"

out=$(run alap-cli inspect -m "$tmp/tiny.gguf") || fail "alap-cli inspect exited $?: $out"
echo "$out"
grep -qx 'architecture: llama' <<<"$out" || fail "alap-cli inspect did not report the architecture"
grep -q '^parameters: 288 ' <<<"$out" || fail "alap-cli inspect did not count 288 parameters"

t=$(date +%s%N)
out=$(run alap --quit-after 1500 2>&1) || fail "alap --quit-after 1500 exited $?: $out"
echo "$out"
grep -q 'window shown: Alap' <<<"$out" || fail "alap showed no window"
echo "packaging: alap ran offscreen for $(ms_since "$t") ms"

t=$(date +%s%N)
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq alap
installed=0
[ ! -e /usr/bin/alap ] || fail "/usr/bin/alap is still there after apt-get remove"
echo "packaging: apt-get remove took $(ms_since "$t") ms"
echo "packaging: deb install ok"
