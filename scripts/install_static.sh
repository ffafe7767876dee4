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

# The point-cloud viewer is served as one minified module with the parts of three.js it uses
# (esbuild drops the rest): 0.56 MB to parse instead of 2.1 MB, which the first frame waits for.
# Pages import frontend/static/vendor/hypolab/pointcloud-viewer.js; edit the source in
# frontend/static/hypolab/ and run this script again.
rm -rf frontend/static/vendor/three  # the unbundled copy earlier versions of this script made
node_modules/.bin/esbuild frontend/static/hypolab/pointcloud-viewer.js --bundle --minify --format=esm \
    --target=es2020 --log-level=warning --outfile=frontend/static/vendor/hypolab/pointcloud-viewer.js

# Page scripts: each entry in frontend/static/hypolab/pages/ becomes one module with what it imports
# (api.js, autosave.js, …) inside, so a page waits for one request instead of one round trip per
# level of imports; the viewer stays its own file. Templates load frontend/static/vendor/hypolab/<page>.js.
node_modules/.bin/esbuild frontend/static/hypolab/pages/*.js --bundle --minify --sourcemap --format=esm \
    --target=es2020 --log-level=warning --external:../../vendor/hypolab/pointcloud-viewer.js \
    --outdir=frontend/static/vendor/hypolab

# axe-core (a devDependency) for the browser crawl's accessibility check (tests/browser/test_crawl_roles.py),
# which loads it into each page it visits; no page of the app loads it.
mkdir -p frontend/static/vendor/axe
cp node_modules/axe-core/axe.min.js frontend/static/vendor/axe/axe.min.js

echo "three $(node -p "require('./node_modules/three/package.json').version") bundled into frontend/static/vendor/hypolab/pointcloud-viewer.js"
