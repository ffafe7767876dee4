#!/usr/bin/env bash
# Install the browser libraries pinned in package.json (quietly; errors still reach stderr) and
# copy the files the pages import into frontend/static/vendor/ (git-ignored).
# Safe to run again: it overwrites the same files.
set -euo pipefail

cd "$(dirname "$0")/.."

if [[ -f package-lock.json ]]; then
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
else
    npm install --no-audit --no-fund --loglevel=error >/dev/null
fi

three=node_modules/three
vendor=frontend/static/vendor/three
mkdir -p "$vendor/addons/controls"

cp "$three/build/three.module.js" "$vendor/three.module.js"
# three r150+ splits the build: three.module.js imports ./three.core.js.
if [[ -f "$three/build/three.core.js" ]]; then
    cp "$three/build/three.core.js" "$vendor/three.core.js"
fi
cp "$three/examples/jsm/controls/OrbitControls.js" "$vendor/addons/controls/OrbitControls.js"

echo "three $(node -p "require('./$three/package.json').version") copied to $vendor"
