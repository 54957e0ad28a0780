#!/usr/bin/env bash
# Install RSP Workbench and what it needs: Java 17+ for Spark (via apt-get when missing
# and possible), the Qt runtime libraries, Node.js and the RSP-JS engine plug-in's npm
# packages, and the Python package with its test extras.
set -euo pipefail
cd "$(dirname "$0")"

need_java=1
if command -v java >/dev/null 2>&1; then
  major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
  if [ -n "$major" ] && [ "$major" -ge 17 ]; then need_java=0; fi
fi

apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else return 1; fi
  fi
  command -v apt-get >/dev/null 2>&1 || return 1
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

if [ "$need_java" -eq 1 ]; then
  echo "install: Java 17+ not found; installing openjdk-17-jre-headless (needed by Spark)"
  apt_install openjdk-17-jre-headless || {
    echo "install: could not install Java automatically. Install Java 17 or newer" \
         "(e.g. 'sudo apt-get install openjdk-17-jre-headless') or set JAVA_HOME, then rerun." >&2
    exit 1
  }
fi

# Qt needs a few system libraries to open windows; only try when one is missing.
if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q libxkbcommon.so.0; then
  apt_install libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libegl1 libgl1 libfontconfig1 libdbus-1-3 \
    || echo "install: note: could not install Qt system libraries; the GUI may not start" >&2
fi

# Node.js + npm for the RSP-JS engine plug-in (engine type rspjs, engines/rspjs), then its
# npm packages exactly as pinned in engines/rspjs/package-lock.json.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install: Node.js/npm not found; installing nodejs and npm (needed by the rspjs engine)"
  apt_install nodejs npm || {
    echo "install: could not install Node.js automatically (needed by engine type rspjs). Install" \
         "nodejs and npm (e.g. 'sudo apt-get install nodejs npm'), then rerun." >&2
    exit 1
  }
fi
if [ ! -f engines/rspjs/node_modules/rsp-js/package.json ] \
   || [ engines/rspjs/package-lock.json -nt engines/rspjs/node_modules/.package-lock.json ]; then
  echo "install: npm ci in engines/rspjs (RSP-JS and its dependencies)"
  npm ci --prefix engines/rspjs --no-audit --no-fund --loglevel=error
fi

python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
echo "install: done. Start the app with: rsp-workbench"
