#!/usr/bin/env bash
# abi_check.sh LIBPATH HEADER
#
# Compares what libqtbus.so exports with what qtbus.h declares:
#   - every function declared with QTBUS_API must be exported (defined) by the library;
#   - the library must export nothing whose name does not start with "qtbus_"
#     (nothing is ignored: no Swift symbols, no runtime helpers, no version nodes).
# Prints both lists, then the differences.  Exit status 0 only when both hold.
set -u
export LC_ALL=C

if [ $# -ne 2 ]; then
    echo "usage: $0 LIBPATH HEADER" >&2
    exit 2
fi
lib=$1
header=$2
[ -r "$lib" ] || { echo "abi_check: cannot read library $lib" >&2; exit 2; }
[ -r "$header" ] || { echo "abi_check: cannot read header $header" >&2; exit 2; }
command -v nm >/dev/null || { echo "abi_check: nm not found" >&2; exit 2; }

# Declared functions: drop preprocessor lines (with their continuations) and comments,
# join the rest, split into declarations at ; { }, keep those that use QTBUS_API, and
# take the identifier right before the first "(".
declared=$(
    awk '
        cont { cont = /\\$/; next }
        /^[[:space:]]*#/ { cont = /\\$/; next }
        { print }
    ' "$header" |
    tr '\n' ' ' |
    perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{ }g' |
    tr ';{}' '\n\n\n' |
    grep -E '(^|[^A-Za-z0-9_])QTBUS_API[[:space:]]' |
    sed -E 's/\(.*//' |
    grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*$' |
    tr -d ' \t' |
    sort -u
)

# Exported (defined, global) dynamic symbols; strip symbol versions (name@VER / name@@VER).
# LOCAL entries of .dynsym are not exported: the linker keeps the thread-local
# variables that TLS relocations name there (qtbus_tls_record, and libdispatch's
# __dispatch_tsd when the runtime is linked in), bound to this library alone.
exported=$(nm -D --defined-only --extern-only "$lib" | awk 'NF >= 2 { print $NF }' | sed -E 's/@.*//' | sort -u)

ndeclared=$(printf '%s\n' "$declared" | grep -c . || true)
nexported=$(printf '%s\n' "$exported" | grep -c . || true)

echo "== declared in $header ($ndeclared functions with QTBUS_API)"
printf '%s\n' "$declared" | sed 's/^/  /'
echo "== exported by $lib ($nexported defined dynamic symbols)"
printf '%s\n' "$exported" | sed 's/^/  /'

status=0
if [ "$ndeclared" -eq 0 ]; then
    echo "FAIL: found no QTBUS_API declaration in $header"
    status=1
fi

missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported") | grep . || true)
if [ -n "$missing" ]; then
    echo "FAIL: declared but not exported:"
    printf '%s\n' "$missing" | sed 's/^/  /'
    status=1
fi

foreign=$(printf '%s\n' "$exported" | grep -v '^qtbus_' | grep . || true)
if [ -n "$foreign" ]; then
    echo "FAIL: exported symbols not starting with qtbus_ ($(printf '%s\n' "$foreign" | wc -l)):"
    printf '%s\n' "$foreign" | sed 's/^/  /'
    status=1
fi

# Informational: qtbus_ exports the header does not declare (allowed, but not API).
extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported") | grep '^qtbus_' || true)
if [ -n "$extra" ]; then
    echo "note: exported qtbus_ symbols that the header does not declare:"
    printf '%s\n' "$extra" | sed 's/^/  /'
fi

if [ $status -eq 0 ]; then
    echo "OK: all $ndeclared declared functions exported, nothing else outside qtbus_"
fi
exit $status
