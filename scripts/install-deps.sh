#!/usr/bin/env bash
# Install, from Debian's packages, everything pslab builds and runs with.
# (wordnet-base: the WordNet data the kge and w2v workloads build real data sets from.)
# Idempotent: packages already present are not reinstalled. When not root (and
# no sudo without a password), prints the apt-get line to run instead.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libsimgrid-dev libgsl-dev libcjson-dev libcunit1-dev
  libzmq3-dev libsodium-dev gnuplot-nox openmpi-bin
  wordnet-base
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: missing: ${missing[*]}"
cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "install-deps: not root; run this as root, then 'make test' again:" >&2
  echo "  apt-get update && ${cmd[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" "${cmd[@]}"
