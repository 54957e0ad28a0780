#!/usr/bin/env bash
# Install RSP Workbench and everything it needs, on a stock Debian/Ubuntu or in your own
# Python environment:
#   - Java 17+ for Spark (apt-get, when missing and possible);
#   - the Python package with its test extras, into
#       * the active virtual environment or conda environment, if one is active, else
#       * a project virtual environment .venv/ made from the first Python >= 3.11 found
#         ($PYTHON, python3, python3.13, python3.12, python3.11). This works with the
#         "externally managed" system Python of Debian 12 / Ubuntu 24.04 (PEP 668); a Python
#         that is not externally managed (pyenv, python.org) lends the venv its installed
#         packages (--system-site-packages), so nothing is downloaded twice;
#   - the system libraries Qt's xcb platform plugin needs (asked of the dynamic linker);
#   - Node.js and npm (Debian's packages, when missing) and the RSP-JS engine plug-in's npm
#     packages exactly as pinned (npm ci in rsp_workbench/engines/rspjs);
# The interpreter used is recorded in .rspwb-python; ./rspwb, ./rsp-workbench and ./run-tests
# run with it, wherever they are called from.
#
# Optional engine plug-ins, built only when asked for:
#   ./install.sh --engines rsprs      rsp-rs (Rust; cargo build --release --locked in rsp_workbench/engines/rsprs)
#   ./install.sh --engines esper      Esper + Jena, C-SPARQL's architecture (Java; mvn package in rsp_workbench/engines/esper)
#   ./install.sh --engines all        every optional engine
# (a comma-separated list; plain ./install.sh installs the core as before).
set -euo pipefail
cd "$(dirname "$0")"

say() { echo "install: $*"; }

# --- which optional engines -------------------------------------------------------------------
# Each optional engine NAME is listed here and built by install_engine_NAME below.
OPTIONAL_ENGINES="rsprs esper"
engines=""
while [ $# -gt 0 ]; do
  case "$1" in
    --engines) [ $# -ge 2 ] || { echo "install: --engines needs a list (rsprs, esper, all)" >&2; exit 2; }
               engines="$2"; shift 2 ;;
    --engines=*) engines="${1#--engines=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument $1 (expected --engines rsprs|esper|all)" >&2; exit 2 ;;
  esac
done
selected=""
for engine in $(echo "$engines" | tr ',' ' '); do
  case "$engine" in
    all) selected="$selected $OPTIONAL_ENGINES" ;;
    *) case " $OPTIONAL_ENGINES " in
         *" $engine "*) selected="$selected $engine" ;;
         *) echo "install: unknown engine '$engine' for --engines (expected one of: $OPTIONAL_ENGINES, all)" >&2; exit 2 ;;
       esac ;;
  esac
done

apt_updated=0
apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else return 1; fi
  fi
  command -v apt-get >/dev/null 2>&1 || return 1
  # apt's and dpkg's progress ("Selecting previously unselected package…", "Unpacking…", "Setting
  # up…") goes to a log, not the terminal; errors stay on stderr, and the log's end is shown on failure
  local log status=0
  log=$(mktemp "${TMPDIR:-/tmp}/rspwb-apt.XXXXXX")
  if [ "$apt_updated" -eq 0 ]; then $sudo apt-get update -qq >"$log" && apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o Dpkg::Use-Pty=0 "$@" >>"$log" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "install: apt-get install $* failed (exit $status); the end of its output:" >&2
    tail -n 20 "$log" >&2
  fi
  rm -f "$log"
  return "$status"
}

# --- Java for Spark -------------------------------------------------------------------------
need_java=1
if command -v java >/dev/null 2>&1; then
  major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
  if [ -n "$major" ] && [ "$major" -ge 17 ]; then need_java=0; fi
fi
if [ "$need_java" -eq 1 ]; then
  say "Java 17+ not found; installing openjdk-17-jre-headless (needed by Spark)"
  apt_install openjdk-17-jre-headless || {
    echo "install: could not install Java automatically. Install Java 17 or newer" \
         "(e.g. 'sudo apt-get install openjdk-17-jre-headless') or set JAVA_HOME, then rerun." >&2
    exit 1
  }
fi

# --- the Python environment -----------------------------------------------------------------
python_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1; }

if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
  python="$VIRTUAL_ENV/bin/python"
  say "using the active virtual environment $VIRTUAL_ENV"
elif [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ]; then
  python="$CONDA_PREFIX/bin/python"
  say "using the active conda environment $CONDA_PREFIX"
else
  base=""
  for candidate in "${PYTHON:-}" python3 python3.13 python3.12 python3.11; do
    [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1 || continue
    if python_ok "$candidate"; then base=$(command -v "$candidate"); break; fi
  done
  if [ -z "$base" ]; then
    echo "install: no Python 3.11 or newer found; install one (e.g. 'sudo apt-get install python3')" \
         "or name it with PYTHON=/path/to/python3 ./install.sh" >&2
    exit 1
  fi
  python="$PWD/.venv/bin/python"
  if [ ! -x "$python" ] || ! python_ok "$python"; then
    share=""
    if ! "$base" -c 'import sys, sysconfig, pathlib; sys.exit(0 if (pathlib.Path(sysconfig.get_path("stdlib")) / "EXTERNALLY-MANAGED").exists() else 1)'; then
      share="--system-site-packages"
    fi
    say "creating the project virtual environment .venv with $base ${share:+($share)}"
    rm -rf .venv
    if ! "$base" -m venv $share .venv >/dev/null 2>&1; then
      version=$("$base" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
      say "Python's venv module is missing; installing python3-venv"
      apt_install "python$version-venv" || apt_install python3-venv || {
        echo "install: cannot create a virtual environment; install python3-venv" \
             "('sudo apt-get install python3-venv') and rerun ./install.sh" >&2
        exit 1
      }
      rm -rf .venv
      "$base" -m venv $share .venv
    fi
  fi
fi

# Node.js + npm for the RSP-JS engine plug-in (engine type rspjs, rsp_workbench/engines/rspjs), then its
# npm packages exactly as pinned in rsp_workbench/engines/rspjs/package-lock.json.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  say "Node.js/npm not found; installing nodejs and npm (needed by the rspjs engine)"
  apt_install nodejs npm || {
    say "could not install Node.js automatically (needed by engine type rspjs). Install" \
         "nodejs and npm (e.g. 'sudo apt-get install nodejs npm'), then rerun." >&2
    exit 1
  }
fi
if [ ! -f rsp_workbench/engines/rspjs/node_modules/rsp-js/package.json ] \
   || [ rsp_workbench/engines/rspjs/package-lock.json -nt rsp_workbench/engines/rspjs/node_modules/.package-lock.json ]; then
  say "npm ci in rsp_workbench/engines/rspjs (RSP-JS and its dependencies)"
  npm ci --prefix rsp_workbench/engines/rspjs --no-audit --no-fund --loglevel=error
fi

"$python" -m pip install --quiet --disable-pip-version-check -e ".[test]"
echo "$python" > .rspwb-python

# --- Qt's system libraries: exactly those the xcb platform plugin cannot find --------------
missing=$("$python" -m rsp_workbench.gui.platform_check 2>/dev/null || true)
if [ -n "$missing" ]; then
  say "installing the system libraries Qt needs to open windows: $(echo $missing)"
  # shellcheck disable=SC2086
  apt_install $missing || for package in $missing; do apt_install "$package" || apt_install "${package}t64" || true; done
  still=$("$python" -m rsp_workbench.gui.platform_check 2>/dev/null || true)
  if [ -n "$still" ]; then
    echo "install: note: Qt still lacks $(echo $still); the desktop app will not open until they are installed" \
         "(sudo apt-get install $(echo $still)); the command line (./rspwb) works without them" >&2
  fi
fi

# --- optional engine plug-ins (--engines) ------------------------------------------------------
# rsp-rs: a Rust program over the crate rsp-rs, pinned in Cargo.toml and Cargo.lock, copied into
# rsp_workbench/engines/rsprs/target/release (git-ignored). Cargo from rustup (~/.cargo/bin) or Debian's.
# Cargo's build folder is the user's cache (RSPWB_CARGO_TARGET overrides it), shared by every clone:
# Oxigraph's bundled RocksDB alone is about half an hour of C++ compilation on one core, paid once per
# machine as Maven's ~/.m2 is; cargo rebuilds whatever Cargo.lock or the sources change.
install_engine_rsprs() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then PATH="$HOME/.cargo/bin:$PATH"; fi
  if ! command -v cargo >/dev/null 2>&1; then
    say "cargo not found; installing cargo (needed by the rsprs engine)"
    apt_install cargo || {
      echo "install: could not install Rust's cargo automatically (needed by engine type rsprs);" \
           "install it (https://rustup.rs or 'sudo apt-get install cargo'), then rerun ./install.sh --engines rsprs" >&2
      exit 1
    }
  fi
  # Oxigraph's RocksDB is C++ (a C++ compiler) and its Rust bindings are generated at build time by
  # bindgen, which loads libclang (Debian's libclang-dev; LIBCLANG_PATH names another): without it the
  # build fails only after compiling all of RocksDB, so it is checked first.
  if ! command -v c++ >/dev/null 2>&1; then
    say "no C++ compiler; installing g++ (needed by the rsprs engine's RocksDB)"
    apt_install g++ || { echo "install: could not install g++ (needed by engine type rsprs); install a C++ compiler," \
                              "then rerun ./install.sh --engines rsprs" >&2; exit 1; }
  fi
  if [ -z "${LIBCLANG_PATH:-}" ] && ! ldconfig -p 2>/dev/null | grep -Eq 'libclang(-[0-9.]+)?\.so'; then
    say "libclang not found; installing libclang-dev (bindgen, in the rsprs engine's build, needs it)"
    apt_install libclang-dev || { echo "install: could not install libclang-dev (needed by engine type rsprs to" \
                                      "build Oxigraph's RocksDB bindings); install it (sudo apt-get install libclang-dev)" \
                                      "or set LIBCLANG_PATH, then rerun ./install.sh --engines rsprs" >&2; exit 1; }
  fi
  say "cargo build --release --locked in rsp_workbench/engines/rsprs (rsp-rs and its dependencies; minutes the first time)"
  local build="${RSPWB_CARGO_TARGET:-${XDG_CACHE_HOME:-$HOME/.cache}/rsp-workbench/rsprs-target}"
  nice -n 10 cargo build --release --locked --quiet --manifest-path rsp_workbench/engines/rsprs/Cargo.toml \
      --target-dir "$build" || {
    echo "install: building the rsprs engine failed (above); the core is installed" >&2
    exit 1
  }
  mkdir -p rsp_workbench/engines/rsprs/target/release
  install -m 755 "$build/release/rspwb-rsprs" rsp_workbench/engines/rsprs/target/release/rspwb-rsprs
}
# Esper + Jena: a Java 17 program (Java is installed above, for Spark) built with Maven from
# rsp_workbench/engines/esper/pom.xml (every version pinned; Maven Central) into its target/
# (git-ignored). Offline first: after the first download ~/.m2 has everything, so no network is
# asked for; rebuilt only when pom.xml or a source is newer than the jar.
install_engine_esper() {
  local folder=rsp_workbench/engines/esper
  if ! command -v mvn >/dev/null 2>&1; then
    say "mvn not found; installing maven (needed by the esper engine)"
    apt_install maven || {
      echo "install: could not install Maven automatically (needed by engine type esper);" \
           "install it ('sudo apt-get install maven'), then rerun ./install.sh --engines esper" >&2
      exit 1
    }
  fi
  if [ -f "$folder/target/rspwb-esper.jar" ] \
     && [ -z "$(find "$folder/pom.xml" "$folder/src" -newer "$folder/target/rspwb-esper.jar" -type f | head -n1)" ]; then
    say "the esper engine is up to date ($folder/target/rspwb-esper.jar)"
    return
  fi
  say "mvn package in $folder (Esper, Jena and their dependencies from Maven Central the first time)"
  nice -n 10 mvn -q -B -o -f "$folder/pom.xml" package >/dev/null 2>&1 \
    || nice -n 10 mvn -q -B -f "$folder/pom.xml" package || {
    echo "install: building the esper engine failed (above); the core is installed" >&2
    exit 1
  }
}
for engine in $selected; do "install_engine_$engine"; done

say "done ($python). Start the app with ./rsp-workbench; the CLI is ./rspwb; tests: ./run-tests"
