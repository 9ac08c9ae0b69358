#!/bin/sh
# ctest wrapper of openai_client.mjs: exit 77 (skipped) when node or the openai package is absent.
# Usage: run_openai_client.sh SCRIPT NPM_PREFIX ALAP_CLI WRITE_TINY_CHAT_MODEL
script="$1"; prefix="$2"
if ! command -v node >/dev/null 2>&1; then
  echo "node not found: skipped"
  exit 77
fi
if [ ! -f "$prefix/node_modules/openai/package.json" ]; then
  echo "the openai npm package is not in $prefix (run scripts/install-npm-deps): skipped"
  exit 77
fi
shift
exec node "$script" "$@"
