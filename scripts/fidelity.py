#!/usr/bin/env python3
"""The imported robot against Pinocchio, the reference of the URDF world: for each URDF the
bridge exports its compiled robot (--export-mjcf), MuJoCo's Python bindings load the export,
and Pinocchio (PyPI `pin`) loads the URDF itself. With joints mapped by name it compares

  - every link frame at N random configurations within the joint limits (position in m,
    rotation angle in rad);
  - each link's mass, centre of mass and rotational inertia, where the bridge did not repair
    them; joint axes and limits;
  - for fixed-base robots, the joint-space mass matrix (mj_fullM against crba) and the gravity
    torques (qfrc_bias at zero velocity against computeGeneralizedGravity), relative to their
    largest entry.

A link whose inertial the bridge repaired (or to which MuJoCo gave its minimum mass) is listed
as an exception with the repair, and its robot's mass matrix and gravity are not held to the
target. It prints one table; it is a benchmark, exiting 0 whatever the errors (2 when nothing
could be compared).

    python3 scripts/fidelity.py [--bin target/debug/mujoco_bridge] [--configs 20] [--filter RE]
                                [URDF ...]    (default: the corpus of scripts/fetch-urdf-corpus.sh)

Runs in .deps/venv (the `mujoco` and `pin` wheels of tests/python/requirements.txt).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import mujoco
import numpy as np
import pinocchio as pin

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, ".deps", "urdf-corpus")
TARGETS = {"frame": 1e-9, "inertial": 1e-9, "dynamics": 1e-6}


class Skipped(Exception):
    """A robot that cannot be compared, and why."""


def export(binary, urdf, folder, extra_args=()):
    """Exports the bridge's robot of `urdf`; returns (MuJoCo model, repaired links: {link:
    what the bridge said})."""
    out = os.path.join(folder, "exported.xml")
    run = subprocess.run([binary, "--urdf", urdf, *extra_args, "--export-mjcf", out],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        lines = [l for l in run.stderr.splitlines() if l.startswith("error")] or run.stderr.splitlines()[-1:]
        raise Skipped("the bridge: " + (lines[0] if lines else f"exit {run.returncode}"))
    repaired = {}
    for line in run.stderr.splitlines():
        m = re.search(r"link '([^']+)' \(line \d+\)/inertial[^:]*: (.*)", line)
        if m and "WARN" in line:
            repaired[m.group(1)] = m.group(2).strip()
    return mujoco.MjModel.from_xml_path(out), repaired


def prefix_of(model, pin_frames):
    """The prefix the bridge put before the robot's names: the one that turns a body name into
    a Pinocchio frame name."""
    for b in range(1, model.nbody):
        name = model.body(b).name
        for k in range(len(name) + 1):
            if name[k:] in pin_frames:
                return name[:k]
    raise Skipped("no body of the export is a link Pinocchio knows")


def rotation_angle(R_a, R_b):
    """The angle of the rotation between two rotation matrices (through the rotation vector:
    acos of the trace cannot tell angles below 1e-8 apart)."""
    return float(np.linalg.norm(pin.log3(R_a.T @ R_b)))


def compare(binary, urdf, configs=20, seed=0, extra_args=()):
    """One row of the table: a dict of the largest errors and the exceptions."""
    with tempfile.TemporaryDirectory() as folder:
        mj, repaired = export(binary, urdf, folder, extra_args)
    floating = any(mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE for j in range(mj.njnt))
    try:
        model = (pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating
                 else pin.buildModelFromUrdf(urdf))
    except Exception as e:  # urdfdom refuses what the bridge repairs
        raise Skipped(f"Pinocchio: {str(e).splitlines()[0][:120]}")
    data = model.createData()
    frames = {f.name: k for k, f in enumerate(model.frames) if f.type == pin.FrameType.BODY}
    prefix = prefix_of(mj, frames)

    # Joints by name: MuJoCo's hinge and slide joints against Pinocchio's 1-DoF joints.
    joints = []  # (pin joint id, MuJoCo joint id)
    for j in range(1, model.njoints):
        name = model.names[j]
        if model.joints[j].nv != 1:
            continue
        jid = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, prefix + name)
        if jid < 0:
            raise Skipped(f"joint '{name}' is not in the export")
        joints.append((j, jid))
    exceptions = []
    rng = np.random.default_rng(seed)
    mjd = mujoco.MjData(mj)
    worst = {"frame m": 0.0, "frame rad": 0.0}

    def configuration():
        q = pin.neutral(model)
        qpos = mj.qpos0.copy()
        if floating:
            free = next(j for j in range(mj.njnt) if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE)
            adr = mj.jnt_qposadr[free]
            xyz = rng.uniform(-1, 1, 3)
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)  # w, x, y, z
            qpos[adr:adr + 3], qpos[adr + 3:adr + 7] = xyz, quat
            q[0:3], q[3:7] = xyz, [quat[1], quat[2], quat[3], quat[0]]
        for j, jid in joints:
            lo, hi = (mj.jnt_range[jid] if mj.jnt_limited[jid] else (-math.pi, math.pi))
            value = rng.uniform(lo, hi)
            qpos[mj.jnt_qposadr[jid]] = value
            i = model.joints[j].idx_q
            if model.joints[j].nq == 2:  # continuous: (cos, sin)
                q[i], q[i + 1] = math.cos(value), math.sin(value)
            else:
                q[i] = value
        return q, qpos

    for _ in range(configs):
        q, qpos = configuration()
        mjd.qpos[:] = qpos
        mujoco.mj_kinematics(mj, mjd)
        pin.framesForwardKinematics(model, data, q)
        for name, f in frames.items():
            b = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, prefix + name)
            if b < 0:
                continue
            placement = data.oMf[f]
            worst["frame m"] = max(worst["frame m"], np.abs(placement.translation - mjd.xpos[b]).max())
            worst["frame rad"] = max(worst["frame rad"],
                                     rotation_angle(placement.rotation, mjd.xmat[b].reshape(3, 3)))

    # Inertials of links the bridge left as written. Pinocchio keeps one inertia per joint,
    # its links (the joint's child and what fixed joints attach to it) merged: MuJoCo's bodies
    # of those links are merged the same way, in the joint's frame, at one configuration.
    worst.update({"mass": 0.0, "com m": 0.0, "inertia": 0.0, "axis": 0.0, "limit": 0.0})
    q, qpos = configuration()
    mjd.qpos[:] = qpos
    mujoco.mj_kinematics(mj, mjd)
    pin.forwardKinematics(model, data, q)
    for j in range(model.njoints):
        links = [name for name, f in frames.items() if model.frames[f].parentJoint == j]
        bodies = [(name, mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, prefix + name)) for name in links]
        bodies = [(name, b) for name, b in bodies if b >= 0]
        fixed = [name for name in links if name in repaired]
        for name in fixed:
            exceptions.append(f"{name}: inertial repaired ({repaired[name]})")
        # MuJoCo's minimum body mass on a link the URDF leaves massless.
        minimal = [(name, b) for name, b in bodies if mj.body_mass[b] <= 1e-6]
        for name, b in minimal:
            exceptions.append(f"{name}: massless in the URDF, {mj.body_mass[b]:.0e} kg in MuJoCo (its minimum body mass): left out of the comparison")
        massive = [b for name, b in bodies if (name, b) not in minimal]
        reference = model.inertias[j]
        if fixed or not massive:
            continue
        mass = sum(mj.body_mass[b] for b in massive)
        com = sum(mj.body_mass[b] * mjd.xipos[b] for b in massive) / mass
        inertia = np.zeros((3, 3))
        for b in massive:
            R = mjd.ximat[b].reshape(3, 3)
            d = mjd.xipos[b] - com
            inertia += R @ np.diag(mj.body_inertia[b]) @ R.T + mj.body_mass[b] * (d @ d * np.eye(3) - np.outer(d, d))
        frame = data.oMi[j]
        lever = frame.rotation.T @ (com - frame.translation)
        inertia = frame.rotation.T @ inertia @ frame.rotation
        worst["mass"] = max(worst["mass"], abs(mass - reference.mass) / reference.mass)
        worst["com m"] = max(worst["com m"], np.abs(lever - reference.lever).max())
        scale = max(np.abs(reference.inertia).max(), 1e-12)
        worst["inertia"] = max(worst["inertia"], np.abs(inertia - reference.inertia).max() / scale)
    for j, jid in joints:
        joint = model.joints[j]
        axis = np.zeros(3)
        aligned = re.search(r"(?:R|P|RUB)([XYZ])$", joint.shortname())
        if aligned:  # JointModelRZ, JointModelPX, JointModelRUBY (continuous), ...
            axis["XYZ".index(aligned.group(1))] = 1.0
        else:  # an unaligned axis: Pinocchio's own
            axis = np.array(joint.extract().axis)
        # In the joint frame: Pinocchio's frame is the URDF joint frame, MuJoCo's the body's.
        worst["axis"] = max(worst["axis"], np.abs(axis - mj.jnt_axis[jid]).max())
        if mj.jnt_limited[jid]:
            i = joint.idx_q
            lo, hi = model.lowerPositionLimit[i], model.upperPositionLimit[i]
            worst["limit"] = max(worst["limit"], abs(lo - mj.jnt_range[jid][0]), abs(hi - mj.jnt_range[jid][1]))

    # Dynamics of fixed-base robots: M(q) and g(q), dof by dof in Pinocchio's order.
    worst.update({"M": None, "g": None})
    if not floating and len(joints) == model.nv:
        dofs = [mj.jnt_dofadr[jid] for _, jid in sorted(joints, key=lambda p: model.joints[p[0]].idx_v)]
        dofs = np.array(dofs)
        worst["M"] = worst["g"] = 0.0
        M_mj = np.zeros((mj.nv, mj.nv))
        for _ in range(configs):
            q, qpos = configuration()
            mjd.qpos[:] = qpos
            mjd.qvel[:] = 0.0
            mujoco.mj_forward(mj, mjd)
            mujoco.mj_fullM(mj, mjd, M_mj)
            M = pin.crba(model, data, q)
            M = np.triu(M) + np.triu(M, 1).T
            g = pin.computeGeneralizedGravity(model, data, q)
            ours_M = M_mj[np.ix_(dofs, dofs)] - np.diag(mj.dof_armature[dofs])
            worst["M"] = max(worst["M"], np.abs(ours_M - M).max() / max(np.abs(M).max(), 1e-12))
            worst["g"] = max(worst["g"], np.abs(mjd.qfrc_bias[dofs] - g).max() / max(np.abs(g).max(), 1e-9))
        if any(mj.dof_armature[dofs] > 0):
            exceptions.append("armature (a config's) taken out of M")
    return {"dof": len(joints), "floating": floating, "worst": worst, "exceptions": exceptions}


def within(row):
    """Whether a row meets the targets (mass matrix and gravity only without exceptions)."""
    w = row["worst"]
    ok = (w["frame m"] <= TARGETS["frame"] and w["frame rad"] <= TARGETS["frame"]
          and w["mass"] <= TARGETS["inertial"] and w["com m"] <= TARGETS["inertial"]
          and w["inertia"] <= TARGETS["inertial"] and w["axis"] <= TARGETS["frame"]
          and w["limit"] <= TARGETS["frame"])
    if w["M"] is not None and not row["exceptions"]:
        ok = ok and w["M"] <= TARGETS["dynamics"] and w["g"] <= TARGETS["dynamics"]
    return ok


def corpus_files(pattern):
    listing = os.path.join(CORPUS, "corpus.tsv")
    if not os.path.exists(listing):
        return []
    rows = []
    with open(listing) as f:
        for line in f:
            path, category, _ = line.rstrip("\n").split("\t")
            if re.search(pattern, path):
                rows.append((os.path.join(CORPUS, path), category))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "mujoco_bridge"))
    parser.add_argument("--configs", type=int, default=20)
    parser.add_argument("--filter", default="")
    parser.add_argument("urdf", nargs="*")
    args = parser.parse_args()
    files = [(u, "given") for u in args.urdf] or corpus_files(args.filter)
    if not files:
        print("fidelity: no URDF given and no corpus (bash scripts/fetch-urdf-corpus.sh)", file=sys.stderr)
        return 2
    head = f"{'robot':44} {'kind':9} {'dof':>3} {'frame m':>8} {'frame rad':>9} {'mass':>8} {'com m':>8} {'inertia':>8} {'axis':>8} {'limit':>8} {'M':>8} {'g':>8}  ok"
    print(head)
    rows, skipped, worst = [], [], {}
    for path, category in files:
        name = os.path.relpath(path, CORPUS) if path.startswith(CORPUS) else path
        try:
            row = compare(args.bin, path, args.configs)
        except Skipped as e:
            skipped.append((name, str(e)))
            continue
        except subprocess.TimeoutExpired:
            skipped.append((name, "the bridge took over 300 s"))
            continue
        rows.append((name, row))
        w = row["worst"]
        for key, value in w.items():
            if value is not None and value >= worst.get(key, (-1, ""))[0]:
                worst[key] = (value, name)
        cells = " ".join(f"{'-' if w[k] is None else format(w[k], '.1e'):>8}"
                         for k in ("frame m", "frame rad", "mass", "com m", "inertia", "axis", "limit", "M", "g"))
        print(f"{name[-44:]:44} {category:9} {row['dof']:>3} {cells}  {'yes' if within(row) else 'NO'}")
    print(f"\n{len(rows)} robots compared, {sum(within(r) for _, r in rows)} within the targets "
          f"(frames and unrepaired inertials 1e-9, mass matrix and gravity 1e-6 relative); {len(skipped)} not compared.")
    print("worst of each kind: " + "; ".join(f"{k} {v:.1e} ({n})" for k, (v, n) in worst.items()))
    exceptions = [(n, e) for n, r in rows for e in r["exceptions"]]
    if exceptions:
        print(f"\n{len(exceptions)} exceptions (the bridge's repairs, MuJoCo's minimum mass):")
        for name, e in exceptions:
            print(f"  {name}: {e}")
    if skipped:
        print("\nnot compared:")
        for name, why in skipped:
            print(f"  {name}: {why}")
    return 0 if rows else 2


if __name__ == "__main__":
    sys.exit(main())
