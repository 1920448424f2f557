#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the code blocks of README.md, DEVELOPERS.md and the guides in docs/ (every
docs/*.md), taken from the pages themselves so the two cannot drift.  One line per
block (file:line, language, PASS / FAIL / SKIP and why), then "N passed, N failed,
N skipped"; the exit status is 1 if any block failed.

The convention (README.md says it again in an HTML comment at its top), the same in
every page:

  ```c with a main()            a complete program: compiled with cc -std=c11 -Wall
                                 -Wextra -Werror against the installed library
                                 (pkg-config qtbus) and run; it must exit 0.
  ```cpp with a main()          the same with c++ -std=c++17 (```c++ and ```cxx too).
  ```sh                          checked with `bash -n`; run too when marked `run`
                                 (```bash too).
  ```swift                       type-checked (swiftc -typecheck, Swift 6 mode) against
                                 the modules of the root package's `swift build`
                                 (.build/debug/Modules): a whole file with top-level code.
  <!-- snippet: ... -->          on the line right before a fence, says more:
      fragment                   not a whole program.  C and C++ fragments are still
                                 compiled: function definitions at column 0 go to file
                                 scope, every other line into a function body, after
                                 the `given` declarations.  Swift fragments are
                                 type-checked inside a function body after `given`.
                                 Other languages' fragments are reported as SKIP with
                                 the marker's reason (`fragment (reason)`).
      given: DECLS               declarations the fragment assumes (file scope).
      needs: PKG                 a pkg-config package the fragment compiles against
                                 (its header is included by `include:`).
      include: HEADER            a header to include before the fragment.
      run                        (sh) run the block in a scratch directory holding
                                 _install (a link to the quick start's prefix) and
                                 app.c (the first complete C program, README.md's:
                                 README.md is checked first).
  Parts are separated by ";;".  A fence with no language (a file listing) is text and
  is not checked.  A ```swift, ```cmake or other block without a marker FAILS: each
  block is either checked here or says why not.  So do a fence whose info string says
  more than the language (```c fragment: use the marker), a marker that is not on the
  line right before its fence, and a fence that is never closed.  Fences indented in a
  list item are found too.

  Example (a fragment that assumes a bus and a handler, and needs <poll.h>):

      <!-- snippet: fragment ;; include: poll.h ;; given: qtbus_bus *bus; void on(const qtbus_event *e, void *u); -->
      ```c
      qtbus_subscribe(bus, "Tick", NULL, on, NULL, NULL, NULL);
      ```

usage: readme-snippets.py [PAGE.md...]   (default: README.md DEVELOPERS.md docs/*.md;
                                         PKG_CONFIG_PATH must find the installed qtbus)
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The pages whose code blocks are checked (the one list): README.md first, whose first
# complete C program a `run` block uses, then DEVELOPERS.md and every page in docs/.
PAGES = sys.argv[1:] or [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "DEVELOPERS.md"),
                         *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]
CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "c++")
COMMON_C = ["stdio.h", "stdlib.h", "string.h", "stdint.h", "qtbus.h"]


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
LANGS = {"c": "c", "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "sh": "sh", "bash": "sh"}


def blocks(path):
    """(line of the opening fence, language, marker dict or None, code, error or None) of
    every block.  Fences may be indented (inside a list item); the code loses that indent.
    A marker that is not right before a fence, an info string with more than the language,
    and a fence that is never closed are errors, so a block cannot slip past unchecked."""
    lines = open(path).read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if "<!--" in lines[i] and "-->" not in lines[i].split("<!--", 1)[1]:
            # A comment over several lines (such as README.md's note on this script):
            # text, not blocks.
            while i < len(lines) and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        mm = MARKER.match(lines[i])
        if mm and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
            out.append((i + 1, "marker", None, "", "a <!-- snippet: --> marker that is not "
                        "on the line right before a fence"))
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, indent, fence, info = i, m.group(1), m.group(2), m.group(3).strip()
        words = info.split()
        lang = words[0].lower() if words else ""
        error = None
        if len(words) > 1:
            error = (f"info string '{info}': the fence names the language only; say the rest "
                     "in a <!-- snippet: ... --> marker on the line before")
        j = i + 1
        close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            error = "the fence is never closed"
        marker = None
        if start > 0:
            mm = MARKER.match(lines[start - 1])
            if mm:
                marker = parse_marker(mm.group(1))
        code = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start + 1:j]]
        out.append((start + 1, LANGS.get(lang, lang), marker, "\n".join(code) + "\n", error))
        i = j + 1
    return out


def parse_marker(text):
    marker = {"fragment": False, "run": False, "given": "", "needs": [], "include": [], "why": ""}
    for part in (p.strip() for p in text.split(";;")):
        key, _, value = part.partition(":")
        key = key.strip()
        if part.startswith("fragment"):
            marker["fragment"] = True
            marker["why"] = part[len("fragment"):].strip(" ,()") or marker["why"]
        elif key == "run":
            marker["run"] = True
        elif key == "given":
            marker["given"] += value.strip() + "\n"
        elif key == "needs":
            marker["needs"] += value.split()
        elif key == "include":
            marker["include"] += value.split()
        else:
            raise SystemExit(f"readme-snippets: unknown marker part '{part}'")
    return marker


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def pkg_flags(*pkgs):
    r = run(["pkg-config", "--cflags", "--libs", *pkgs])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return r.stdout.split()


def split_fragment(code):
    """File-scope parts (function definitions at column 0, #includes) and body lines."""
    top, body, lines, i = [], [], code.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            top.append(line)
        elif re.match(r"^(?:[A-Za-z_]\w*[ \t\*]+)+[A-Za-z_]\w*\s*\([^;]*$", line):
            # A function definition (a type before the name, no ';'): up to its closing
            # brace at column 0, or this line when it closes itself.
            chunk = [line]
            while not chunk[-1].rstrip().endswith("}") or (len(chunk) > 1 and chunk[-1] != "}"):
                i += 1
                if i >= len(lines):
                    break
                chunk.append(lines[i])
                if lines[i] == "}":
                    break
            top += chunk
        else:
            body.append(line)
        i += 1
    return "\n".join(top), "\n".join(body)


def check_c(lang, marker, code, tmp, first_program):
    compiler, std, ext = (CC, "-std=c11", "c") if lang == "c" else (CXX, "-std=c++17", "cpp")
    flags = ["-Wall", "-Wextra", "-Werror", std]
    if marker is None or not marker["fragment"]:
        if not re.search(r"\bint\s+main\s*\(", code):
            return "FAIL", "no main(): a complete program, or mark it <!-- snippet: fragment -->"
        src = os.path.join(tmp, f"program.{ext}")
        open(src, "w").write(code)
        exe = os.path.join(tmp, "program")
        r = run([compiler, *flags, src, *pkg_flags("qtbus"), "-o", exe])
        if r.returncode != 0:
            return "FAIL", "does not compile:\n" + r.stderr
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        r = run([exe], env=env, timeout=60)
        if r.returncode != 0:
            return "FAIL", f"exits {r.returncode}:\n{r.stdout}{r.stderr}"
        if first_program[0] is None:
            first_program[0] = code
        return "PASS", "compiled and ran, exit 0"
    for pkg in marker["needs"]:
        if run(["pkg-config", "--exists", pkg]).returncode != 0:
            return "SKIP", f"needs {pkg}, not installed"
    top, body = split_fragment(code)
    includes = COMMON_C + marker["include"]
    unit = "".join(f"#include <{h}>\n" for h in includes)
    # Fragments leave parameters and locals unused on purpose.
    unit += "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n"
    unit += "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
    unit += "#pragma GCC diagnostic ignored \"-Wunused-function\"\n"
    unit += marker["given"] + "\n" + top + "\n"
    unit += "void readme_fragment(void);\nvoid readme_fragment(void)\n{\n" + body + "\n}\n"
    src = os.path.join(tmp, f"fragment.{ext}")
    open(src, "w").write(unit)
    extra = pkg_flags(*marker["needs"]) if marker["needs"] else []
    r = run([compiler, *flags, "-D_GNU_SOURCE", *pkg_flags("qtbus"), *extra, "-fsyntax-only", src])
    if r.returncode != 0:
        return "FAIL", "fragment does not compile:\n" + r.stderr
    return "PASS", "fragment compiled" + (f" with {', '.join(marker['needs'])}" if marker["needs"] else "")


def check_swift(marker, code, tmp):
    modules = os.environ.get("QTBUS_SWIFT_MODULES", os.path.join(ROOT, ".build", "debug", "Modules"))
    if not os.path.exists(os.path.join(modules, "QTEventBus.swiftmodule")):
        return "SKIP", f"no QTEventBus module in {modules} (run swift build first)"
    if marker is not None and marker["fragment"]:
        imports = "".join(l + "\n" for l in code.split("\n") if l.startswith("import "))
        body = "\n".join(l for l in code.split("\n") if not l.startswith("import "))
        unit = ("import QTEventBus\n" + imports + marker["given"] + "\n"
                + "func readmeFragment() async throws {\n" + body + "\n}\n")
        what = "fragment type-checked"
    else:
        unit, what = code, "type-checked"
    src = os.path.join(tmp, "main.swift")
    open(src, "w").write(unit)
    # The C modules the Swift ones import: the engine's shims, and the bridge's header
    # and nats.c's (QTEventBusNATS).
    r = run(["swiftc", "-typecheck", "-swift-version", "6", "-I", modules,
             "-I", os.path.join(ROOT, "Sources", "CQtbusShims", "include"),
             "-I", os.path.join(ROOT, "Sources", "CQtbusNATS", "include"),
             "-I", os.path.join(ROOT, "Sources", "CNATS"), src])
    if r.returncode != 0:
        return "FAIL", "does not type-check:\n" + r.stdout + r.stderr
    return "PASS", what


def check_sh(marker, code, tmp, first_program):
    src = os.path.join(tmp, "block.sh")
    open(src, "w").write(code)
    r = run(["bash", "-n", src])
    if r.returncode != 0:
        return "FAIL", "bash -n:\n" + r.stderr
    if marker is None or not marker["run"]:
        why = marker["why"] if marker and marker["why"] else "syntax only"
        return "PASS", f"bash -n ({why})"
    if first_program[0] is None:
        return "FAIL", "run: no complete C program before this block to be app.c"
    work = os.path.join(tmp, "run")
    os.makedirs(work)
    os.symlink(os.path.join(ROOT, "_install"), os.path.join(work, "_install"))
    open(os.path.join(work, "app.c"), "w").write(first_program[0])
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    r = run(["bash", "-e", src], cwd=work, env=env, timeout=120)
    if r.returncode != 0:
        return "FAIL", f"run exits {r.returncode}:\n{r.stdout}{r.stderr}"
    return "PASS", "bash -n, and ran in a scratch directory"


def check_page(page, counts, first_program):
    name = os.path.relpath(page, ROOT) if os.path.isabs(page) else page
    for line, lang, marker, code, error in blocks(page):
        if lang == "" and error is None:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                if error is not None:
                    status, why = "FAIL", error
                elif lang in ("c", "cpp"):
                    status, why = check_c(lang, marker, code, tmp, first_program)
                elif lang == "sh":
                    status, why = check_sh(marker, code, tmp, first_program)
                elif lang == "swift" and not (marker and marker["why"].startswith("not compiled")):
                    status, why = check_swift(marker, code, tmp)
                elif marker is not None and marker["fragment"]:
                    status, why = "SKIP", f"fragment: {marker['why'] or 'no reason given'}"
                else:
                    status, why = "FAIL", f"a {lang} block this script cannot check: mark it <!-- snippet: fragment (why) -->"
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                status, why = "FAIL", str(e)
        counts[status] += 1
        first, _, rest = why.partition("\n")
        print(f"{name + ':' + str(line):<22} {lang:<6} {status}  {first}")
        if rest:
            print("    " + rest.strip().replace("\n", "\n    "))


def main():
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    first_program = [None]
    for page in PAGES:
        check_page(page, counts, first_program)
    summary = f"{counts['PASS']} passed, {counts['FAIL']} failed"
    if counts["SKIP"]:
        summary += f", {counts['SKIP']} skipped"
    print(f"{summary} ({len(PAGES)} pages)")
    sys.exit(1 if counts["FAIL"] else 0)


main()
