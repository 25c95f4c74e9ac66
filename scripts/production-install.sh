#!/usr/bin/env bash
# The production install, step by step: build with the development tools, prune them, and run
# what is left. CI runs it whole on a clean copy of the committed HEAD; the Dockerfile's stages
# run its steps one by one, so the image is built exactly as CI tests it.
#
#   scripts/production-install.sh build   npm ci, then npm run build (needs the dev dependencies)
#   scripts/production-install.sh prune   drop the dev dependencies; fails if TypeScript is left
#   scripts/production-install.sh check   node dist/src/main.js serve on a scratch SQLite database,
#                                         wait for /healthz, /readyz, /console/ and the storefront
#                                         panel, then SIGTERM: exit 0
#   scripts/production-install.sh runtime DIR   copy into DIR what the Dockerfile's runtime stage
#                                         copies from the pruned tree (its COPY --from=prune lines)
#   scripts/production-install.sh         (ci) build, prune and check in a temporary copy of HEAD,
#                                         then check again in the runtime stage's files alone
set -euo pipefail

build() {
  npm ci --no-audit --no-fund
  npm run build
}

prune() {
  npm prune --omit=dev --no-audit --no-fund
  # The point of the production tree: nothing of the build is needed, or left, at run time.
  if [ -e node_modules/typescript ] || [ -e node_modules/.bin/tsc ]; then
    echo "production-install: TypeScript is still installed after the prune" >&2
    return 1
  fi
  [ -f dist/src/main.js ] || { echo "production-install: dist/src/main.js is missing: run the build step first" >&2; return 1; }
}

# Node answers the HTTP calls: the runtime image has no curl.
http_ok() {
  node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"
}

check() {
  local scratch port pid code=0
  scratch="$(mktemp -d)"
  port="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
  DATABASE_URL="sqlite:$scratch/loyalty.db" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn LOYALTY_BOOTSTRAP=false \
    node dist/src/main.js serve &
  pid=$!
  for _ in $(seq 1 60); do
    http_ok "http://127.0.0.1:$port/healthz" && break
    kill -0 "$pid" 2>/dev/null || { echo "production-install: the server exited before it answered" >&2; rm -rf "$scratch"; return 1; }
    sleep 0.5
  done
  local paths=(/healthz /readyz /console/ /storefront/loyalty.js) missing=()
  for path in "${paths[@]}"; do
    http_ok "http://127.0.0.1:$port$path" || missing+=("$path")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "production-install: ${paths[*]} answer 200 on port $port ($PWD)"
  else
    echo "production-install: the server in $PWD did not answer ${missing[*]} with 200" >&2
    code=1
  fi
  kill -TERM "$pid"
  wait "$pid" || { echo "production-install: the server did not shut down cleanly" >&2; code=1; }
  rm -rf "$scratch"
  return "$code"
}

# The runtime stage has only what the Dockerfile copies from the pruned tree: a file the server
# reads at run time and the Dockerfile leaves out fails the check there, not in a user's image.
runtime() {
  local target="$1" from to
  [ -n "$target" ] || { echo "usage: $0 runtime DIR" >&2; return 2; }
  mkdir -p "$target"
  # One line per source: "SOURCE DEST"; a DEST ending in / is a folder the source goes into.
  while read -r from to; do
    from="${from#/app/}"
    case "$to" in */) to="$to$(basename "$from")" ;; esac
    mkdir -p "$target/$(dirname "$to")"
    cp -a "$from" "$target/$to"
  done < <(sed -n 's|^COPY --from=prune ||p' Dockerfile | awk '{ for (i = 1; i < NF; i++) print $i, $NF }')
  [ -f "$target/dist/src/main.js" ] || { echo "production-install: the Dockerfile's runtime stage has no dist/src/main.js" >&2; return 1; }
}

ci() {
  local root copy image
  root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
  copy="$(mktemp -d)"
  image="$(mktemp -d)"
  trap 'rm -rf "$copy" "$image"' RETURN
  # The committed HEAD, as a clean clone has it: nothing ignored or uncommitted comes along.
  git -C "$root" archive --format=tar HEAD | tar -x -C "$copy"
  (cd "$copy" && build && prune && check && runtime "$image")
  (cd "$image" && check)
}

case "${1:-ci}" in
  build | prune | check | ci) "${1:-ci}" ;;
  runtime) runtime "${2:-}" ;;
  *)
    echo "usage: $0 [build|prune|check|ci|runtime DIR]" >&2
    exit 2
    ;;
esac
