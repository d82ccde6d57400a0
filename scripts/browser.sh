#!/usr/bin/env bash
# Installs what the memory browser's tests drive: Debian's headless Chromium and its WebDriver
# (chromedriver), when they are missing. Prints the paths it found or installed; exits non-zero
# only when they cannot be installed (the tests then skip with a message saying so).
set -euo pipefail
have() { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }
if ! have; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "browser.sh: no apt-get here: install chromium and chromedriver yourself" >&2
        exit 1
    fi
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        sudo="sudo"
    fi
    echo "== installing chromium and chromium-driver (apt-get)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver >/dev/null
fi
have || { echo "browser.sh: chromium or chromedriver still missing after apt-get" >&2; exit 1; }
echo "chromium: $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
echo "chromedriver: $(command -v chromedriver)"
