#!/usr/bin/env bash
# Issue 38's structure bars (docs/design/snmp.md): no source file over 1,000
# lines, no non-test function over 150, no downcast/Any in crates/mibs, no
# import circle between sibling modules (the sim's files excepted).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/check-structure.py
echo "structure bars hold"
