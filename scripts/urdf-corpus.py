#!/usr/bin/env python3
"""Runs every URDF of the corpus (scripts/fetch-urdf-corpus.sh) through the bridge and,
side by side, through MuJoCo's own URDF compiler, and reports what loads, what steps with a
finite state, and what is refused (with the loader's message). It is a report, not a test:
it exits 0 whatever the outcome, 2 only when the corpus is missing.

    python3 scripts/urdf-corpus.py [--bin target/release/mujoco_bridge] [--jobs 2] [--filter REGEX]

Standard library only: the MuJoCo side runs in .deps/corpus-venv (created here, with the
mujoco 3.17.0 wheel) as one child process per file, so a crash in the compiler stays isolated.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, ".deps", "urdf-corpus")
VENV = os.path.join(ROOT, ".deps", "corpus-venv")
WHEELS = os.path.join(ROOT, ".deps", "wheels")
STEPS = 500
TIMEOUT_S = 120

# The MuJoCo side, run as `python -c CHILD CORPUS_ROOT FILE STEPS` in the corpus venv. It prints
# one JSON line {"class": ..., "detail": ...}; no such line means the child crashed.
CHILD = r'''
import json, math, os, re, sys

corpus, path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
here = os.path.dirname(path)


def package_dirs():
    """Folders a package:// name may mean: any folder of that name, and any folder whose
    package.xml gives that <name>."""
    found = {}
    for folder, subdirs, files in os.walk(corpus):
        for d in subdirs:
            found.setdefault(d, []).append(os.path.join(folder, d))
        if "package.xml" in files:
            with open(os.path.join(folder, "package.xml"), errors="replace") as f:
                m = re.search(r"<name>\s*([^<\s]+)\s*</name>", f.read())
            if m:
                found.setdefault(m.group(1), []).append(folder)
    return found


packages = None


def in_parents(rest):
    """`rest` under the URDF's folder or one of its parents, as loaders fall back to."""
    folder = here
    while True:
        hit = os.path.join(folder, rest)
        if os.path.exists(hit):
            return hit
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def resolve(ref):
    global packages
    if ref.startswith("package://"):
        package, _, rest = ref[len("package://"):].lstrip("/").partition("/")
        if not rest:  # package://mesh.obj names no package at all
            return in_parents(package) or ref
        if packages is None:
            packages = package_dirs()
        # Several folders may share a name (meshes, assets): take the one nearest the URDF.
        hits = [os.path.join(d, rest) for d in packages.get(package, [])]
        hits = [h for h in hits if os.path.exists(h)]
        if hits:
            return max(hits, key=lambda h: len(os.path.commonpath([h, path])))
        return in_parents(rest) or ref
    if ref.startswith("file://"):
        return ref[len("file://"):]
    if os.path.isabs(ref):
        return ref
    # from_xml_string has no base folder: relative names must become absolute.
    return os.path.normpath(os.path.join(here, ref))


def result(cls, detail=""):
    print(json.dumps({"class": cls, "detail": detail}))
    sys.exit(0)


with open(path, encoding="utf-8", errors="replace") as f:
    text = f.read()
compiler = re.search(r"<compiler\b[^>]*>", text)
if compiler and re.search(r"\bmeshdir\s*=", compiler.group(0)):
    # The file's own <mujoco><compiler meshdir=...>: MuJoCo strips mesh paths and looks in
    # meshdir, taken from the URDF's folder; from_xml_string has none, so make it absolute.
    fixed = re.sub(r"""(\b(?:meshdir|texturedir|assetdir)\s*=\s*)(["'])(.*?)\2""",
                   lambda m: m.group(1) + m.group(2) + resolve(m.group(3)) + m.group(2),
                   compiler.group(0))
    text = text.replace(compiler.group(0), fixed, 1)
else:
    text = re.sub(r"""(\bfilename\s*=\s*)(["'])(.*?)\2""",
                  lambda m: m.group(1) + m.group(2) + resolve(m.group(3)) + m.group(2), text)
    # MuJoCo's importer strips mesh paths and balances inertias unless told otherwise;
    # visuals are dropped as the bridge does for physics (it keeps them without mass).
    ours = 'strippath="false" balanceinertia="false" discardvisual="true"'
    if compiler:  # the file's own compiler settings win, but paths must stay whole
        if "strippath" not in compiler.group(0):
            text = text.replace("<compiler", '<compiler strippath="false"', 1)
    elif re.search(r"<mujoco\b[^>]*>", text):
        text = re.sub(r"(<mujoco\b[^>]*>)", r"\1<compiler " + ours + "/>", text, count=1)
    else:
        text = re.sub(r"(<robot\b[^>]*>)", r"\1<mujoco><compiler " + ours + "/></mujoco>",
                      text, count=1)

import mujoco
import numpy as np

try:
    model = mujoco.MjModel.from_xml_string(text)
except Exception as e:
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    result("refused", lines[0] if lines else type(e).__name__)
data = mujoco.MjData(model)
for _ in range(steps):
    mujoco.mj_step(model, data)
badqacc = data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
finite = bool(np.all(np.isfinite(data.qpos)) and np.all(np.isfinite(data.qvel)))
detail = f"nq {model.nq}, nbody {model.nbody}"
if not finite or badqacc:
    result("unstable", f"{detail}, finite {str(finite).lower()}, bad qacc {badqacc}")
result("ok", detail)
'''


def corpus_venv_python():
    """The corpus venv's python with mujoco 3.17.0, created on first use."""
    python = os.path.join(VENV, "bin", "python")
    check = [python, "-c", "import mujoco, numpy; assert mujoco.__version__ == '3.17.0'"]
    if os.path.exists(python) and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    print("urdf-corpus: creating .deps/corpus-venv with mujoco 3.17.0", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    pip = [python, "-m", "pip", "install", "--quiet", "--find-links", WHEELS, "mujoco==3.17.0", "numpy"]
    # The wheel in .deps/wheels first; its dependencies (numpy, ...) may need PyPI.
    if subprocess.run(pip[:4] + ["--no-index"] + pip[4:], capture_output=True).returncode != 0:
        subprocess.run(pip, check=True)
    subprocess.run(check, check=True)
    return python


def last_lines(text, n=3):
    return " / ".join([l.strip() for l in text.splitlines() if l.strip()][-n:])


def run_bridge(binary, path, workdir):
    env = dict(os.environ)
    # Packages are found only by crawling the corpus, as on a machine without a ROS install.
    env.pop("MUJOCO_BRIDGE_PACKAGE_PATH", None)
    env.pop("AMENT_PREFIX_PATH", None)
    env["ROS_PACKAGE_PATH"] = CORPUS
    cmd = [binary, "--urdf", path, "--steps", str(STEPS), "--mode", "fast"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env,
                           cwd=workdir, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        # What it said before it hung tells where (loading, stepping or ending).
        said = "\n".join(text.decode(errors="replace") if isinstance(text, bytes) else text
                         for text in (e.stderr, e.stdout) if text)
        return {"class": "crash", "detail": f"timeout after {TIMEOUT_S} s: {last_lines(said)}",
                "warnings": 0}
    stderr = p.stderr.splitlines()
    out = {"warnings": sum("WARN" in l for l in stderr), "detail": ""}
    repairs = [l for l in stderr if re.search(r"\brepairs?\b", l)]
    if repairs:  # the loader's one-line summary; drop the log prefix and file name
        out["repairs"] = re.sub(r"^\[[^\]]*\]\s*", "", repairs[-1]).replace(path + ": ", "")
    gains = [l for l in stderr if "servo gains (" in l]
    if gains:  # the joints whose ruled springs the coupled bound softened
        bound = re.findall(r"(\S+) kp ([0-9.e+-]+) kv [0-9.e+-]+ \((softened|capped)", gains[-1])
        if bound:
            out["softened"] = ", ".join(f"{joint} kp {kp} ({how})" for joint, kp, how in bound)
    if p.returncode == 0:
        runs = [l for l in p.stdout.splitlines() if l.startswith("run:")]
        if not runs:
            out.update({"class": "crash", "detail": "exit 0 without a run: line"})
            return out
        m = re.search(r"instabilities (\d+)", runs[-1])
        unstable = (m is None or int(m.group(1)) > 0) or "state finite false" in runs[-1]
        out["class"] = "unstable" if unstable else "ok"
        if unstable:
            out["detail"] = runs[-1]
    elif p.returncode == 2:
        errors = [l for l in stderr if l.startswith("error:")]
        text = errors[0] if errors else last_lines(p.stderr)
        out.update({"class": "refused", "detail": text.replace(path + ": ", "")})
    else:
        how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        out.update({"class": "crash", "detail": f"{how}: {last_lines(p.stderr)}"})
    return out


def run_mujoco(python, path):
    cmd = [python, "-c", CHILD, CORPUS, path, str(STEPS)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"class": "crash", "detail": f"timeout after {TIMEOUT_S} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
    return {"class": "crash", "detail": f"{how}: {last_lines(p.stderr)}"}


def describe(r):
    text = r["class"]
    extra = []
    if r.get("warnings"):
        extra.append(f"{r['warnings']} warnings")
    if r.get("repairs"):
        extra.append(r["repairs"])
    if r.get("softened"):
        extra.append("gains the bounds changed: " + r["softened"])
    if r.get("detail"):
        extra.append(r["detail"])
    return text + (" [" + "; ".join(extra) + "]" if extra else "")


def summary(name, results):
    n = len(results) or 1
    count = collections.Counter(r["class"] for r in results)
    return (f"{name}:  loaded and stepped {STEPS} steps with finite state {count['ok']} "
            f"({100.0 * count['ok'] / n:.1f} %), unstable {count['unstable']}, "
            f"clean failures {count['refused']}, crashes {count['crash']}")


def kind(message):
    """A refusal message with its names and numbers blanked, to group alike failures."""
    message = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", message)
    message = re.sub(r"(?<=\s)/\S+", "…", message)  # file paths
    return re.sub(r"\d+(\.\d+)?", "N", message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "mujoco_bridge"),
                        help="the bridge binary (default target/release/mujoco_bridge)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at a time (default 2)")
    parser.add_argument("--filter", help="only files whose corpus path matches this regex")
    parser.add_argument("--steps", type=int, default=500,
                        help="steps each robot runs in fast mode (default 500)")
    parser.add_argument("--no-mujoco", action="store_true",
                        help="run the bridge only (quicker when iterating on the loader)")
    args = parser.parse_args()
    global STEPS
    STEPS = args.steps

    tsv = os.path.join(CORPUS, "corpus.tsv")
    if not os.path.exists(tsv):
        print("urdf-corpus: no corpus in .deps/urdf-corpus; run scripts/fetch-urdf-corpus.sh first",
              file=sys.stderr)
        return 2
    with open(tsv) as f:
        entries = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    if args.filter:
        entries = [e for e in entries if re.search(args.filter, e[0])]

    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        print(f"urdf-corpus: no bridge binary at {binary} (cargo build --release); "
              "reporting MuJoCo only", file=sys.stderr)
        binary = None
    python = None if args.no_mujoco else corpus_venv_python()

    skipped = {"class": "skipped", "detail": ""}
    workdir = tempfile.mkdtemp(prefix="urdf-corpus-")  # whatever a run writes lands here
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = []
        for rel, _category, _wheel in entries:
            path = os.path.join(CORPUS, rel)
            b = pool.submit(run_bridge, binary, path, workdir) if binary else None
            m = pool.submit(run_mujoco, python, path) if python else None
            jobs.append((b, m))
        results = []
        width = min(90, max((len(e[0]) for e in entries), default=0))
        for (rel, category, _wheel), (b, m) in zip(entries, jobs):
            bridge = b.result() if b else skipped
            mujoco = m.result() if m else skipped
            results.append((rel, bridge, mujoco))
            print(f"{category:9s} {rel:{width}s}  bridge={describe(bridge)}  "
                  f"mujoco={describe(mujoco)}", flush=True)

    print(f"\n== URDF corpus: {len(results)} files")
    if binary:
        print(summary("bridge", [b for _, b, _ in results]))
        softened = [(rel, b["softened"]) for rel, b, _ in results if b.get("softened")]
        print(f"bridge: servo gains the bounds changed (softened: the coupled check; capped: "
              f"the joint's smallest inertia over its range) in {len(softened)} robots")
        for rel, joints in softened:
            print(f"  {rel}: {joints}")
    if python:
        print(summary("mujoco", [m for _, _, m in results]))
    failures = [(rel, b) for rel, b, _ in results if b["class"] in ("refused", "crash")]
    if failures:
        print(f"\nbridge failures ({len(failures)}):")
        for rel, b in failures:
            print(f"  {rel}: {b['detail']}")
        kinds = collections.Counter(kind(b["detail"]) for _, b in failures)
        print("\nbridge failures by kind:")
        for text, n in kinds.most_common():
            print(f"  {n:3d}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
