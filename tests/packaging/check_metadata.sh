#!/usr/bin/env bash
# check_metadata.sh desktop|metainfo FILE: validates the desktop entry (desktop-file-validate) or
# the AppStream metainfo (appstreamcli validate --no-net) and checks the Bengali translations.
# Exit 77 (skip) when the validator is not installed.
set -euo pipefail
kind=$1 file=$2
fail() { echo "FAIL: $*"; exit 1; }

case "$kind" in
  desktop)
    command -v desktop-file-validate >/dev/null || { echo "SKIP: desktop-file-validate not installed (desktop-file-utils)"; exit 77; }
    out=$(desktop-file-validate "$file" 2>&1) || fail "desktop-file-validate: $out"
    # Hints are fine; errors and warnings are not (they do not all change the exit status).
    if grep -qE ': (error|warning):' <<<"$out"; then fail "desktop-file-validate: $out"; fi
    [ -n "$out" ] && echo "$out"
    for key in 'Name\[bn\]=আলাপ' 'Comment\[bn\]=.+' 'Keywords\[bn\]=.+;' 'GenericName\[bn\]=.+' \
               'Icon=org\.alap\.Alap' 'Exec=alap'; do
      grep -qE "^${key}\$" "$file" || fail "$file has no line matching ^${key}\$"
    done
    ;;
  metainfo)
    command -v appstreamcli >/dev/null || { echo "SKIP: appstreamcli not installed (appstream)"; exit 77; }
    appstreamcli validate --no-net "$file" || fail "appstreamcli validate --no-net $file"
    for pat in '<name xml:lang="bn">আলাপ</name>' '<summary xml:lang="bn">' '<p xml:lang="bn">' \
               '<launchable type="desktop-id">org.alap.Alap.desktop</launchable>' \
               '<binary>alap</binary>' '<binary>alap-cli</binary>' '<release version="0.1.0"' '<content_rating type="oars-1.1"'; do
      grep -qF "$pat" "$file" || fail "$file lacks $pat"
    done
    ;;
  *) fail "unknown kind $kind" ;;
esac
echo "packaging: $kind ok"
