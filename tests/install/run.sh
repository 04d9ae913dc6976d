#!/usr/bin/env bash
# run.sh BUILD_DIR SOURCE_DIR: the consumer test (tests/install/CMakeLists.txt).
# Everything it makes lives in one temporary directory, removed on any exit.
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mmpi-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Nothing from the build tree may help: no plugin path, no build directories.
unset MMPI_PLUGIN_PATH
export QT_QPA_PLATFORM=offscreen QT_QUICK_BACKEND=software

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "install into a prefix, then move the prefix"
cmake --install "$build" --prefix "$work/staged" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
mv "$work/staged" "$work/prefix"
prefix=$work/prefix
[ -x "$prefix/bin/mmpirun" ] || fail "no mmpirun in the installed prefix"
if grep -rqs -- "$work/staged" "$prefix/lib" "$prefix/bin"; then
    fail "the installed files name the prefix they were installed in: $(grep -rls -- "$work/staged" "$prefix" | head -3)"
fi

# extract NAME: the code block after README's "<!-- example: NAME -->".
extract() {
    awk -v want="<!-- example: $1 -->" '
        $0 == want { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$source/README.md"
}
step "the README's example, as printed"
mkdir -p "$work/hello"
extract hello/CMakeLists.txt >"$work/hello/CMakeLists.txt"
extract hello/hello.cpp >"$work/hello/hello.cpp"
[ -s "$work/hello/CMakeLists.txt" ] && [ -s "$work/hello/hello.cpp" ] || fail "README has no hello example"
cp -r "$source/tests/install/qmlapp" "$work/qmlapp"

configure_and_build() { # DIR
    cmake -S "$work/$1" -B "$work/$1/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$prefix" >"$work/$1.log" 2>&1 \
        && cmake --build "$work/$1/build" >>"$work/$1.log" 2>&1 \
        || { cat "$work/$1.log"; fail "building $1 against the installed package"; }
}
step "build them with find_package(MMPI)"
configure_and_build hello
configure_and_build qmlapp
grep -q "MMPI_PLUGIN_DIR" "$prefix/lib/cmake/MMPI/MMPIConfig.cmake" || fail "MMPIConfig.cmake sets no MMPI_PLUGIN_DIR"
mkdir -p "$work/plugindir"
cat >"$work/plugindir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(plugindir LANGUAGES CXX)
find_package(MMPI REQUIRED)
file(WRITE \${CMAKE_BINARY_DIR}/plugindir.txt "\${MMPI_PLUGIN_DIR}")
CMAKE
cmake -S "$work/plugindir" -B "$work/plugindir/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
plugindir=$(cat "$work/plugindir/build/plugindir.txt")
[ "$(realpath -m "$plugindir")" = "$(realpath -m "$prefix/lib/mmpi/plugins")" ] \
    || fail "MMPI_PLUGIN_DIR is $plugindir, not $prefix/lib/mmpi/plugins"

step "outside mmpirun the example says why it cannot start"
set +e
"$work/hello/build/hello" >"$work/alone.out" 2>&1
status=$?
set -e
[ $status -eq 2 ] || { cat "$work/alone.out"; fail "hello alone exited $status, not 2"; }
grep -q "MMPI_RANK is not set" "$work/alone.out" || { cat "$work/alone.out"; fail "hello alone did not say why"; }

for transport in local tcp; do
    step "hello: 3 nodes over $transport under the installed mmpirun"
    (cd "$work" && "$prefix/bin/mmpirun" -n 3 --transport $transport --timeout 120 hello/build/hello) \
        >"$work/hello-$transport.out" 2>&1 || { cat "$work/hello-$transport.out"; fail "hello over $transport"; }
    for r in 1 2; do
        grep -qx "\[0\] rank 0 got: hello from rank $r" "$work/hello-$transport.out" \
            || { cat "$work/hello-$transport.out"; fail "rank 0 missed rank $r's hello over $transport"; }
    done
    for r in 0 1 2; do
        grep -qx "\[$r\] rank $r: the ranks add up to 3" "$work/hello-$transport.out" \
            || { cat "$work/hello-$transport.out"; fail "rank $r's sum over $transport"; }
    done

    step "canvasapp: 3 nodes over $transport, each grabs its ParallelCanvas"
    out=$work/pictures-$transport
    mkdir -p "$out"
    "$prefix/bin/mmpirun" -n 3 --transport $transport --timeout 180 "$work/qmlapp/build/canvasapp" "$out" \
        >"$work/canvas-$transport.out" 2>&1 || { cat "$work/canvas-$transport.out"; fail "canvasapp over $transport"; }
    if grep -qi "lost" "$work/canvas-$transport.out"; then
        cat "$work/canvas-$transport.out"; fail "a node reported a loss when the others ended normally"
    fi
    python3 "$source/tests/install/checkpictures.py" "$out"/canvas-0.png "$out"/canvas-1.png "$out"/canvas-2.png \
        || { cat "$work/canvas-$transport.out"; fail "the pictures over $transport"; }
done
step "passed"
