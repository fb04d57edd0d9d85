#!/usr/bin/env bash
# Installs the Debian packages dpl needs that are missing; silent and quick when everything is already there.
set -euo pipefail

packages=(antlr4 libantlr4-runtime-dev libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libcli11-dev
          cmake ninja-build g++ clang)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$package")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  echo "bootstrap: missing packages (${missing[*]}); run as root or install sudo" >&2
  exit 1
fi
echo "bootstrap: installing ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
