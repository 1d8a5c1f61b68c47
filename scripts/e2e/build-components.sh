#!/usr/bin/env bash
# Builds the upstream Kubernetes components the e2e suite runs, from the Go module
# proxy, into a cache outside the repository (docs/development.md#e2e-components).
#
#   scripts/e2e/build-components.sh [--json] [--cached-only] [component ...]
#
# --cached-only builds nothing: components not cached are reported as failed.
# Components: etcd kube-apiserver kube-controller-manager kube-scheduler kubectl metacontroller kueue
# jobset lws helm (default: all of these), and kubelet, containerd and runc (only when named: the
# node-side DRA scenario), and prometheus (only when named: the dashboard scenario). Each lands in
#   ${GPUSTACK_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpustack-operator-e2e}/<component>-<version>/
# with the binary in bin/, build.log, build-seconds and component.json. A component
# whose binary is already cached is skipped without touching the network, so a second
# run is instant. Kueue, JobSet, LeaderWorkerSet and Metacontroller also get their CRDs copied next
# to the binary (crds/; the first three their webhook manifests too, webhook/), so the harness never
# depends on the Go module cache afterwards.
#
# Versions (pinned so the cache key is stable; override with the variables below, and
# list what the proxy serves with `go list -m -versions <module>`):
#   E2E_ETCD_VERSION            go.etcd.io/etcd/server/v3
#   E2E_KUBERNETES_VERSION      k8s.io/kubernetes (staging modules: v0.<minor>.<patch>)
#   E2E_METACONTROLLER_VERSION  v4.x only (1.x is not supported, docs/install.md): built from the
#                               unchanged source archive E2E_METACONTROLLER_SOURCE (default: the
#                               shared third_party/metacontroller-<version>.tar.gz beside the
#                               repository, since the module proxy refuses every v4). Without the
#                               archive Metacontroller fails to build with one line saying so.
#   E2E_KUEUE_VERSION           sigs.k8s.io/kueue
#   E2E_JOBSET_VERSION          sigs.k8s.io/jobset (the workloads scenario's training gangs)
#   E2E_LWS_VERSION             sigs.k8s.io/lws (LeaderWorkerSet: the multi-node inference groups)
#   E2E_CONTAINERD_VERSION      github.com/containerd/containerd/v2 (containerd, its runc shim, ctr)
#   E2E_RUNC_VERSION            github.com/opencontainers/runc (cgo: needs gcc, the static glibc,
#                               pkg-config and apt-get/dpkg-deb for libseccomp-dev, unpacked only)
#   E2E_PROMETHEUS_VERSION      the Debian package `prometheus` of that version, downloaded and
#                               unpacked (apt-get download + dpkg-deb -x: nothing installed, no
#                               service started); a real Prometheus, not built from Go (the module
#                               is large and needs its web UI assets generated)
#   E2E_HELM_VERSION            helm.sh/helm/v4 (command helm.sh/helm/v4/cmd/helm; the e2e
#                               suite lints, renders and installs charts/gpustack-operator)
#
# Output: progress on stderr; on stdout one line per component
#   <component> <version> <binary path>     (or, with --json, one JSON object).
# A component that fails to build is reported (exact go error in its build.log and in
# component.json "error") and the script exits 1 after trying the others; a failure is
# not cached, the next run tries again.
#
# Independent components build concurrently (E2E_BUILD_PARALLEL=0 serialises them).
# All nine cold, measured 2026-12-03 (empty GPUSTACK_E2E_CACHE, GOMODCACHE and GOCACHE; 2 cores
# shared with a full .ci/run, load average 11-16): 18 min 25 s wall, peak RSS 1.9 GB — etcd 354 s,
# Metacontroller 445 s, containerd 549 s, helm 745 s, Kueue 939 s beside the Kubernetes chain
# (kube-apiserver 982 s, then kube-controller-manager 87 s, kube-scheduler 7 s, kubelet 29 s).
# Older figures, before kube-scheduler, kubelet, containerd and helm were added:
# cold on 2 cores (empty module and build caches, downloads included): all of them
# concurrently ~34 min (kube-apiserver 29 min, then kube-controller-manager 5 min;
# etcd 8 min and Kueue 27 min beside it); one at a time ~50 min (etcd 7.5, kube-apiserver
# ~28, kube-controller-manager 3.5, Kueue 10). The
# binaries take ~335 MB; the module cache ~1.3 GB and the Go build cache ~4.5 GB.
#
# JobSet v0.10.1 and LeaderWorkerSet v0.7.0 together, measured 2026-12-05 (their own module zips
# fetched, every dependency cold in GOMODCACHE or not, GOCACHE shared with the default components
# building beside them on 2 cores at load average 20-30): 33 min wall each, 526 s user + 110 s system
# CPU for both, peak RSS 0.96 GB; two binaries of 55 and 54 MB.
#
# kube-scheduler v1.36.3 alone, measured: 6 s wall with an empty GPUSTACK_E2E_CACHE and a warm Go
# build cache (scratch module re-made, packages shared with kube-apiserver already compiled, so
# mostly the link; 3.3 s user + 2.7 s system CPU). It builds after kube-controller-manager in the
# Kubernetes chain, so a cold CI run pays only its own packages and link beyond kube-apiserver's.
#
# helm v4.3.2 alone, measured: 4 min 36 s wall (165 s user + 38 s system CPU) on 2 shared cores
# (load average 4-8 from other work), 89 modules downloaded. Warm beforehand: the Go build cache
# of the components above and 48 of the 179 modules helm's go.mod lists (golang.org/x, grpc,
# otel, …); cold: every k8s.io module, since helm needs k8s.io v0.37.2 and the Kubernetes
# binaries above pull in v0.36.x. The binary takes 67 MB.
#
# runc v1.5.2 alone, measured cold (empty GPUSTACK_E2E_CACHE, GOMODCACHE and GOCACHE; the standard
# library compiled with cgo and libseccomp-dev's download included): 4 min 6 s wall (67 s user + 14 s
# system CPU) on 2 shared cores at load average 16-22 (other builds and test runs beside it); 24
# modules downloaded; a 9 MB static binary. With warm module and build caches: 43 s.
#
# Metacontroller: the module proxy in use answers 403 "This module version is not
# available." for every v4 pseudo-version (and for list/latest) of
# github.com/metacontroller/metacontroller, so v4.17.2 is built from the unchanged source archive in
# the shared third_party/ folder (its README: how it was made).
#
# The defaults are the default e2e lane, the stack docs/install.md tells users to run; the
# compatibility lane (.ci/run) sets E2E_KUBERNETES_VERSION=v1.36.3 E2E_KUEUE_VERSION=v0.17.0.
set -euo pipefail

ETCD_VERSION=${E2E_ETCD_VERSION:-v3.6.16}
KUBERNETES_VERSION=${E2E_KUBERNETES_VERSION:-v1.37.2}
METACONTROLLER_VERSION=${E2E_METACONTROLLER_VERSION:-v4.17.2}
METACONTROLLER_SOURCE=${E2E_METACONTROLLER_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)/../shared/third_party/metacontroller-$METACONTROLLER_VERSION.tar.gz}
KUEUE_VERSION=${E2E_KUEUE_VERSION:-v0.19.2}
JOBSET_VERSION=${E2E_JOBSET_VERSION:-v0.10.1}
LWS_VERSION=${E2E_LWS_VERSION:-v0.7.0}
HELM_VERSION=${E2E_HELM_VERSION:-v4.3.2}
# Debian 12's containerd (1.6) cannot inject CDI devices (1.7+ can); the node-side DRA scenario runs this one.
CONTAINERD_VERSION=${E2E_CONTAINERD_VERSION:-v2.4.2}
# The runc containerd v2.4.2 is tested with (its script/setup/runc-version).
RUNC_VERSION=${E2E_RUNC_VERSION:-v1.5.2}
# Debian 12's (bookworm) Prometheus 2.42.0.
PROMETHEUS_VERSION=${E2E_PROMETHEUS_VERSION:-2.42.0+ds-5+deb12u1}

CACHE=${GPUSTACK_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpustack-operator-e2e}
WORK="$CACHE/.work"

json=0
cached_only=0
want=()
for arg in "$@"; do
  case "$arg" in
    --json) json=1 ;;
    --cached-only) cached_only=1 ;;
    -h|--help) sed -n '2,/^set -euo pipefail/{/^#/p}' "$0"; exit 0 ;;
    etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|containerd|runc|metacontroller|kueue|jobset|lws|helm|prometheus) want+=("$arg") ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
if [[ ${#want[@]} -eq 0 ]]; then
  want=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl metacontroller kueue jobset lws helm)
fi

log() { echo "[build-components] $*" >&2; }

version_of() {
  case "$1" in
    etcd) echo "$ETCD_VERSION" ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet) echo "$KUBERNETES_VERSION" ;;
    metacontroller) echo "$METACONTROLLER_VERSION" ;;
    kueue) echo "$KUEUE_VERSION" ;;
    jobset) echo "$JOBSET_VERSION" ;;
    lws) echo "$LWS_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    containerd) echo "$CONTAINERD_VERSION" ;;
    runc) echo "$RUNC_VERSION" ;;
    prometheus) echo "$PROMETHEUS_VERSION" ;;
  esac
}

dir_of() { echo "$CACHE/$1-$(version_of "$1")"; }
bin_of() { echo "$(dir_of "$1")/bin/$1"; }

mkdir -p "$CACHE" "$WORK"

# Go settings: the default GOPATH/GOMODCACHE so the module cache is shared; static,
# reproducible binaries; module graph updated as needed in the scratch modules.
export CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# Directory of a module version in the module cache (downloads it if needed).
mod_dir() {
  local out
  out=$(go mod download -json "$1" 2>&1) || true
  local dir
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$out")
  if [[ -z "$dir" ]]; then
    # The go command's own message (e.g. the proxy's refusal), unescaped.
    local err
    err=$(sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$out")
    if [[ -n "$err" ]]; then printf '%b\n' "$err" >&2; else echo "$out" >&2; fi
    return 1
  fi
  echo "$dir"
}

# Scratch module at $WORK/<name>: go.mod from stdin.
scratch() {
  local d="$WORK/$1"
  rm -rf "$d"
  mkdir -p "$d"
  cat >"$d/go.mod"
  echo "$d"
}

json_escape() { sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e ':a;N;$!ba;s/\n/\\n/g' -e 's/\t/\\t/g'; }

write_info() { # component version bin src error
  local d
  d=$(dir_of "$1")
  mkdir -p "$d"
  local secs=""
  [[ -f "$d/build-seconds" ]] && secs=$(cat "$d/build-seconds")
  local crds=""
  [[ -d "$d/crds" ]] && crds="$d/crds"
  printf '{"component":"%s","version":"%s","binary":"%s","crds":"%s","module":"%s","buildSeconds":%s,"error":"%s"}\n' \
    "$1" "$2" "$3" "$crds" "$4" "${secs:-null}" "$(printf '%s' "$5" | json_escape)" >"$d/component.json"
}

build_etcd() {
  local v=$ETCD_VERSION d
  d=$(scratch "etcd-$v" <<EOF
module gpustack-operator.e2e/etcd

go 1.25.0

require go.etcd.io/etcd/server/v3 $v
EOF
)
  # The server module's root package is the etcd main (server/main.go → etcdmain.Main).
  (cd "$d" && go build -trimpath -ldflags "-s -w" -o "$1" go.etcd.io/etcd/server/v3)
  echo "go.etcd.io/etcd/server/v3@$v"
}

kubernetes_module() {
  local v=$KUBERNETES_VERSION
  local staging="v0.${v#v1.}"
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [[ -n "$gomod" ]] || { echo "cannot download k8s.io/kubernetes@$v" >&2; return 1; }
  local replaces
  # Every `k8s.io/X => ./staging/src/k8s.io/X` becomes `k8s.io/X => k8s.io/X v0.N.P`.
  replaces=$(sed -n "s#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/k8s\.io/.*#\t\1 => \1 $staging#p" "$gomod")
  [[ -n "$replaces" ]] || { echo "no staging replace lines in $gomod" >&2; return 1; }
  log "kubernetes $v: $(wc -l <<<"$replaces") staging modules pinned to $staging"
  scratch "kubernetes-$v" <<EOF
module gpustack-operator.e2e/kubernetes

go 1.26.0

godebug default=go1.26

require k8s.io/kubernetes $v

replace (
$replaces
)
EOF
}

kube_ldflags() {
  local v=$KUBERNETES_VERSION minor
  minor=${v#v1.}
  minor=${minor%%.*}
  local date
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local flags="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  echo "$flags"
}

build_kube() { # out cmd
  local d="$WORK/kubernetes-$KUBERNETES_VERSION"
  # The Kubernetes binaries share the scratch module (and so the compiled packages in the build cache).
  if [[ ! -f "$d/go.mod" || ! -f "$d/.ready" ]]; then
    d=$(kubernetes_module)
    touch "$d/.ready"
  fi
  (cd "$d" && go build -trimpath -tags notest -ldflags "$(kube_ldflags)" -o "$1" "k8s.io/kubernetes/cmd/$2")
  echo "k8s.io/kubernetes@$KUBERNETES_VERSION"
}

# v4: the source archive (or folder) of the release, unchanged; its dependencies from the module proxy.
build_metacontroller_source() {
  local v=$METACONTROLLER_VERSION d="$WORK/metacontroller-$METACONTROLLER_VERSION-src" what
  rm -rf "$d"
  mkdir -p "$d"
  if [[ -d $METACONTROLLER_SOURCE ]]; then
    cp -r "$METACONTROLLER_SOURCE"/. "$d/"
    what="$METACONTROLLER_SOURCE (folder)"
  else
    tar xzf "$METACONTROLLER_SOURCE" -C "$d" --strip-components=1
    what="$(basename "$METACONTROLLER_SOURCE") sha256:$(sha256sum "$METACONTROLLER_SOURCE" | cut -d' ' -f1)"
  fi
  chmod -R u+w "$d"
  (cd "$d" && go build -trimpath -ldflags "-s -w -X main.version=$v" -o "$1" ./pkg/cmd/metacontroller)
  copy_dir "$d/manifests/production" "$(dir_of metacontroller)/crds" 'metacontroller-crds-v1.yaml'
  echo "metacontroller@$v from $what"
}

build_metacontroller() {
  if [[ $METACONTROLLER_VERSION != v4.* ]]; then
    echo "Metacontroller $METACONTROLLER_VERSION is not supported: E2E_METACONTROLLER_VERSION must be a v4 release (docs/install.md)" >&2
    return 1
  fi
  if [[ ! -e $METACONTROLLER_SOURCE ]]; then
    echo "Metacontroller $METACONTROLLER_VERSION: no source at $METACONTROLLER_SOURCE (the module proxy refuses v4): set E2E_METACONTROLLER_SOURCE to its release archive or folder" >&2
    return 1
  fi
  build_metacontroller_source "$1"
}

build_kueue() {
  local v=$KUEUE_VERSION src
  src=$(mod_dir "sigs.k8s.io/kueue@$v") || return 1
  # The CRDs first: the suite needs them even if the manager does not build.
  copy_dir "$src/config/components/crd/bases" "$(dir_of kueue)/crds" '*.yaml'
  copy_dir "$src/config/components/webhook" "$(dir_of kueue)/webhook" '*.yaml'
  copy_kueue_chart "$src"
  local d
  d=$(scratch "kueue-$v" <<EOF
module gpustack-operator.e2e/kueue

go 1.26

require sigs.k8s.io/kueue $v
EOF
)
  (cd "$d" && go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$v" \
    -o "$1" sigs.k8s.io/kueue/cmd/kueue)
  echo "sigs.k8s.io/kueue@$v"
}

# JobSet and LeaderWorkerSet: like Kueue, a scratch module requiring the release, the manager's main
# package built with the version stamp its Makefile sets; the CRDs, the webhook manifests and the
# release's patches of them (webhook/patches/{mutating,validating}-patch.yaml) copied.
build_jobset() {
  local v=$JOBSET_VERSION src
  src=$(mod_dir "sigs.k8s.io/jobset@$v") || return 1
  copy_dir "$src/config/components/crd/bases" "$(dir_of jobset)/crds" '*.yaml'
  copy_dir "$src/config/components/webhook" "$(dir_of jobset)/webhook" 'manifests.yaml'
  # The release's kustomize patches (JSON patches of the Pod webhooks: an objectSelector on JobSet's Pods).
  copy_dir "$src/config/components/webhook/patches" "$(dir_of jobset)/webhook/patches" '*-patch.yaml'
  local d
  d=$(scratch "jobset-$v" <<EOF
module gpustack-operator.e2e/jobset

go 1.26

require sigs.k8s.io/jobset $v
EOF
)
  # The manager is the module's root package (main.go).
  (cd "$d" && go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/jobset/pkg/version.GitVersion=$v" \
    -o "$1" sigs.k8s.io/jobset)
  echo "sigs.k8s.io/jobset@$v"
}

build_lws() {
  local v=$LWS_VERSION src
  src=$(mod_dir "sigs.k8s.io/lws@$v") || return 1
  copy_dir "$src/config/crd/bases" "$(dir_of lws)/crds" '*.yaml'
  copy_dir "$src/config/webhook" "$(dir_of lws)/webhook" 'manifests.yaml'
  copy_dir "$src/config/webhook" "$(dir_of lws)/webhook/patches" '*-patch.yaml'
  local d
  d=$(scratch "lws-$v" <<EOF
module gpustack-operator.e2e/lws

go 1.26

require sigs.k8s.io/lws $v
EOF
)
  # The manager's main package is cmd/ (cmd/main.go).
  (cd "$d" && go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/lws/pkg/version.GitVersion=$v" \
    -o "$1" sigs.k8s.io/lws/cmd)
  echo "sigs.k8s.io/lws@$v"
}

build_helm() {
  local v=$HELM_VERSION d
  d=$(scratch "helm-$v" <<EOF
module gpustack-operator.e2e/helm

go 1.26.0

require helm.sh/helm/v4 $v
EOF
)
  # helm's Makefile stamps the release into internal/version (the source alone says only the
  # release line, e.g. "v4.3"); metadata stays empty, as for a tagged build. The Kubernetes
  # version helm assumes comes from client-go's version in the build info, no flag needed.
  (cd "$d" && go build -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$v -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
    -o "$1" helm.sh/helm/v4/cmd/helm)
  echo "helm.sh/helm/v4@$v"
}

# containerd with its runc shim and ctr beside it (bin/containerd-shim-runc-v2, bin/ctr): the shim is
# found on PATH, so the scenario puts bin/ first. no_btrfs: no btrfs headers needed.
build_containerd() {
  local v=$CONTAINERD_VERSION d
  d=$(scratch "containerd-$v" <<EOF
module gpustack-operator.e2e/containerd

go 1.26.0

require github.com/containerd/containerd/v2 $v
EOF
)
  local bin
  bin=$(dirname "$1")
  (cd "$d" && go build -trimpath -tags no_btrfs \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$v" \
    -o "$1" github.com/containerd/containerd/v2/cmd/containerd \
    && go build -trimpath -tags no_btrfs -ldflags "-s -w" -o "$bin/containerd-shim-runc-v2" \
      github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    && go build -trimpath -tags no_btrfs -ldflags "-s -w" -o "$bin/ctr" github.com/containerd/containerd/v2/cmd/ctr)
  echo "github.com/containerd/containerd/v2@$v"
}

# runc, which containerd's runc shim runs (the scenario gives it as the runtime's BinaryName). Its
# nsenter is C, so cgo, linked statically like upstream's release binaries, with seccomp: the kubelet
# runs every Pod sandbox with the RuntimeDefault profile, which a runc without it refuses ("seccomp:
# config provided but seccomp not supported"). libseccomp's headers and static library come from the
# distribution's libseccomp-dev, unpacked into the scratch module (apt-get download + dpkg-deb -x:
# nothing installed); the binary needs nothing at run time. Without the libpathrs tag (a Rust library;
# runc falls back to its Go implementation).
build_runc() {
  local v=$RUNC_VERSION d
  d=$(scratch "runc-$v" <<EOF
module gpustack-operator.e2e/runc

go 1.26.0

require github.com/opencontainers/runc $v
EOF
)
  local sysroot="$d/libseccomp"
  mkdir -p "$sysroot"
  # A fresh machine may have no package lists yet: as root (runc is built only as root) fetch them
  # once and retry; nothing is installed.
  if ! (cd "$d" && apt-get download libseccomp-dev >&2) && ! { [[ $(id -u) -eq 0 ]] && apt-get update >&2 && (cd "$d" && apt-get download libseccomp-dev >&2); }; then
    echo "runc: could not download libseccomp-dev (apt-get download libseccomp-dev, after apt-get update as root)" >&2
    return 1
  fi
  if ! dpkg-deb -x "$d"/libseccomp-dev_*.deb "$sysroot"; then
    echo "runc: could not unpack libseccomp-dev" >&2
    return 1
  fi
  local lib
  lib=$(dirname "$(find "$sysroot" -name libseccomp.a | head -n 1)")
  # The paths also in CGO_CFLAGS/CGO_LDFLAGS, which the go command hashes (what pkg-config says it does
  # not: a cached package would keep the -L of an earlier, deleted scratch folder).
  (cd "$d" && CGO_ENABLED=1 PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot" \
    CGO_CFLAGS="-O2 -g -I$sysroot/usr/include" CGO_LDFLAGS="-O2 -g -L$lib" \
    go build -trimpath -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -linkmode external -extldflags -static" \
    -o "$1" github.com/opencontainers/runc)
  echo "github.com/opencontainers/runc@$v"
}

# Prometheus from the distribution's package, unpacked only (like libseccomp-dev for runc above).
build_prometheus() {
  local v=$PROMETHEUS_VERSION d="$WORK/prometheus-$PROMETHEUS_VERSION"
  rm -rf "$d"
  mkdir -p "$d/root"
  if ! (cd "$d" && apt-get download "prometheus=$v" >&2) && ! { [[ $(id -u) -eq 0 ]] && apt-get update >&2 && (cd "$d" && apt-get download "prometheus=$v" >&2); }; then
    echo "prometheus: could not download the package prometheus=$v (apt-get download, after apt-get update as root)" >&2
    return 1
  fi
  local deb
  deb=$(ls "$d"/prometheus_*.deb)
  dpkg-deb -x "$deb" "$d/root"
  cp "$d/root/usr/bin/prometheus" "$1"
  echo "debian package prometheus=$v sha256:$(sha256sum "$deb" | cut -d' ' -f1)"
}

# Kueue's own Helm chart (the e2e suite merges our configuration into its values and renders it).
copy_kueue_chart() { # module dir
  local dest
  dest="$(dir_of kueue)/chart"
  rm -rf "$dest"
  cp -r "$1/charts/kueue" "$dest"
  chmod -R u+w "$dest"
}

copy_dir() { # src dest glob
  rm -rf "$2"
  mkdir -p "$2"
  local f n=0
  for f in "$1"/$3; do
    [[ -f "$f" ]] || continue
    cp "$f" "$2/"
    n=$((n + 1))
  done
  chmod -R u+w "$2"
  [[ $n -gt 0 ]] || { echo "no $3 under $1" >&2; return 1; }
}

# Builds one component unless cached; writes its component.json either way.
build_one() {
  local c=$1 v d bin
  v=$(version_of "$c")
  d=$(dir_of "$c")
  bin=$(bin_of "$c")
  # One builder per component and version (parallel test workers, or CI's two lanes building side
  # by side, may ask for the same binary); --cached-only only reads, so it never waits.
  if [[ $cached_only -eq 0 ]]; then
    mkdir -p "$CACHE"
    local lock
    exec {lock}>"$d.lock"
    flock "$lock"
  fi
  if [[ -x "$bin" && -f "$d/component.json" ]]; then
    log "$c $v: cached ($bin)"
    # A Kueue cached before its chart was kept: fetch the chart alone.
    if [[ $c == kueue && ! -d "$d/chart" && $cached_only -eq 0 ]]; then
      local src
      src=$(mod_dir "sigs.k8s.io/kueue@$v") && copy_kueue_chart "$src" || log "kueue $v: chart not copied"
    fi
    return 0
  fi
  if [[ $cached_only -eq 1 ]]; then
    write_info "$c" "$v" "" "" "not in the cache ($d) and --cached-only given"
    return 1
  fi
  mkdir -p "$d/bin"
  rm -f "$d/build-seconds"
  log "$c $v: building (log: $d/build.log)"
  local start rc secs module="" tmp="$bin.tmp"
  start=$(date +%s)
  set +e
  case "$c" in
    etcd) module=$(set -e; build_etcd "$tmp" 2>"$d/build.log") ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet) module=$(set -e; build_kube "$tmp" "$c" 2>"$d/build.log") ;;
    metacontroller) module=$(set -e; build_metacontroller "$tmp" 2>"$d/build.log") ;;
    kueue) module=$(set -e; build_kueue "$tmp" 2>"$d/build.log") ;;
    jobset) module=$(set -e; build_jobset "$tmp" 2>"$d/build.log") ;;
    lws) module=$(set -e; build_lws "$tmp" 2>"$d/build.log") ;;
    helm) module=$(set -e; build_helm "$tmp" 2>"$d/build.log") ;;
    containerd) module=$(set -e; build_containerd "$tmp" 2>"$d/build.log") ;;
    runc) module=$(set -e; build_runc "$tmp" 2>"$d/build.log") ;;
    prometheus) module=$(set -e; build_prometheus "$tmp" 2>"$d/build.log") ;;
  esac
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  if [[ $rc -eq 0 && -x "$tmp" ]]; then
    mv "$tmp" "$bin"
    echo "$secs" >"$d/build-seconds"
    write_info "$c" "$v" "$bin" "$module" ""
    log "$c $v: built in ${secs}s"
    return 0
  fi
  rm -f "$tmp"
  local err
  err=$(grep -v '^go: downloading' "$d/build.log" | tail -n 20)
  write_info "$c" "$v" "" "" "${err:-build failed (exit $rc)}"
  log "$c $v: FAILED after ${secs}s; last lines of $d/build.log:"
  sed 's/^/    /' <<<"$err" >&2
  return 1
}

main() {
  local c f started failed=0
  started=$(date +%s)
  # Independent components build concurrently (E2E_BUILD_PARALLEL=0: one at a time):
  # on 2 cores the module downloads of one overlap the compiles of another. The two
  # Kubernetes binaries share a scratch module and build cache, so they run in turn.
  local kube=() pids=()
  for c in "${want[@]}"; do
    case "$c" in
      kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet) kube+=("$c") ;;
      *)
        if [[ ${E2E_BUILD_PARALLEL:-1} == 0 ]]; then build_one "$c" || true
        else build_one "$c" & pids+=($!); fi ;;
    esac
  done
  for c in "${kube[@]}"; do
    if [[ ${E2E_BUILD_PARALLEL:-1} == 0 ]]; then build_one "$c" || true; fi
  done
  if [[ ${E2E_BUILD_PARALLEL:-1} != 0 && ${#kube[@]} -gt 0 ]]; then
    ( for c in "${kube[@]}"; do build_one "$c" || true; done ) & pids+=($!)
  fi
  for f in "${pids[@]}"; do wait "$f" || true; done
  local elapsed=$(( $(date +%s) - started ))
  [[ $elapsed -gt 5 ]] && log "done in ${elapsed}s"

  for c in "${want[@]}"; do
    f="$(dir_of "$c")/component.json"
    if [[ ! -f "$f" ]] || grep -q '"binary":""' "$f"; then failed=1; fi
    [[ -f "$f" ]] || continue
    if [[ $json -eq 1 ]]; then
      cat "$f"
    else
      sed -n 's/.*"component":"\([^"]*\)","version":"\([^"]*\)","binary":"\([^"]*\)".*/\1 \2 \3/p' "$f"
    fi
  done
  exit $failed
}

# Parsed whole before it runs, so editing this file mid-build is harmless.
main
