#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# spdx.sh: every source file of the tree names its license (the root LICENSE, BSD-3-Clause) in
# an SPDX line among its first three lines, so a file copied out of the tree still says under
# what terms. Sources: C, C++ and headers (also .def and .h.in), shell scripts, the build files and
# the wrappers' templates. Run by `make check` with top_srcdir set; exits 0 pass, 1 fail.

top_srcdir=${top_srcdir:-${0%/*}/../..}
name=spdx
tag='SPDX-License-Identifier: BSD-3-Clause'

if ! grep -q 'BSD 3-Clause License' "$top_srcdir/LICENSE" 2>/dev/null; then
    echo "$name: FAIL ($top_srcdir/LICENSE is missing or is not the BSD 3-Clause license)"
    exit 1
fi
missing=$(
    cd "$top_srcdir" || exit 1
    {
        find runtime collectives include tests bench tools examples -type f \
            \( -name '*.c' -o -name '*.cc' -o -name '*.h' -o -name '*.def' -o -name '*.h.in' -o -name '*.sh' \
            -o -name '*-osh*.in' \) ! -name '*_version.h' ! -path '*/.libs/*' ! -path '*/.deps/*'
        for f in configure.ac Makefile.am autogen.sh fabshmem.pc.in .ci/run .ci/sanitize \
            debian/rules; do
            [ -f "$f" ] && echo "$f"
        done
    } | sort | while read -r f; do
        head -n 3 "$f" | grep -q "$tag" || echo "$f"
    done
)
if [ -n "$missing" ]; then
    n=$(echo "$missing" | wc -l)
    echo "$name: FAIL ($n file(s) without '$tag' in their first 3 lines)"
    echo "$missing" | head -20 | sed 's/^/    /'
    exit 1
fi
echo "$name: PASS"
