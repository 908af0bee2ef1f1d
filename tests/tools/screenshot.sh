#!/usr/bin/env bash
# tests/tools/screenshot.sh REPORT_DIR: opens REPORT_DIR/index.html in
# Debian's Chromium, headless (package chromium; not installed by make
# test): the page as the browser built it must hold the report's tables and
# its SVG plots, and a screenshot of it goes to REPORT_DIR/screenshot.png,
# to look at.
set -uo pipefail
dir=$(cd "${1:?usage: screenshot.sh REPORT_DIR}" && pwd)
command -v chromium > /dev/null || { echo "screenshot.sh: no chromium (apt-get install chromium)" >&2; exit 2; }
opts=(--headless --no-sandbox --disable-gpu --hide-scrollbars)
dom=$(timeout 60 chromium "${opts[@]}" --dump-dom "file://$dir/index.html" 2>/dev/null)
fails=0
for want in '<svg' '<table' 'Verdicts' 'Detection latency over'; do
    if [[ $dom == *"$want"* ]]; then echo "PASS screenshot: the page holds '$want'"
    else echo "FAIL screenshot: the page lacks '$want'"; fails=$((fails + 1)); fi
done
timeout 60 chromium "${opts[@]}" --window-size=1200,3000 --screenshot="$dir/screenshot.png" \
    "file://$dir/index.html" > /dev/null 2>&1
if [ -s "$dir/screenshot.png" ]; then echo "PASS screenshot: $dir/screenshot.png (look at it)"
else echo "FAIL screenshot: no screenshot"; fails=$((fails + 1)); fi
exit $((fails != 0))
