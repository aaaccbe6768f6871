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
as an exception with the repair, and left out of the inertial comparison; the exception is
explained by giving Pinocchio's joint MuJoCo's inertial of those links, after which the mass
matrix and gravity torques are held to the target like any other. It prints one table; it is a benchmark, exiting 0 whatever the errors (2 when nothing
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


class quiet_stderr:
    """Sends what C++ code writes to stderr nowhere while it lives."""

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)


def prefix_of(model, pin_frames):
    """The prefix the bridge put before the robot's names: of those that turn the first body's
    name into a Pinocchio frame name, the one that does so for the most bodies."""
    names = [model.body(b).name for b in range(1, model.nbody)]
    candidates = [names[0][:k] for k in range(len(names[0]) + 1) if names and names[0][k:] in pin_frames]
    if not candidates:
        raise Skipped("no body of the export is a link Pinocchio knows")
    return max(candidates, key=lambda p: sum(n.startswith(p) and n[len(p):] in pin_frames for n in names))


def rotation_angle(R_a, R_b):
    """The angle of the rotation between two rotation matrices (through the rotation vector:
    acos of the trace cannot tell angles below 1e-8 apart)."""
    return float(np.linalg.norm(pin.log3(R_a.T @ R_b)))


def compare(binary, urdf, configs=20, seed=0, extra_args=()):
    """One row of the table: a dict of the largest errors and the exceptions."""
    with tempfile.TemporaryDirectory() as folder:
        mj, repaired = export(binary, urdf, folder, extra_args)
    # The bridge's floating base is a free joint `floating_base` on the root link; a URDF
    # `floating` joint is a free joint of its own name (in Pinocchio too).
    floating = any(mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE and mj.joint(j).name.endswith("floating_base")
                   for j in range(mj.njnt))
    try:
        with quiet_stderr():  # urdfdom prints what it refuses; the exception says it
            model = (pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating
                     else pin.buildModelFromUrdf(urdf))
    except Exception as e:  # urdfdom refuses what the bridge repairs
        raise Skipped(f"Pinocchio: {str(e).splitlines()[0][:120]}")
    data = model.createData()
    frames = {f.name: k for k, f in enumerate(model.frames) if f.type == pin.FrameType.BODY}
    prefix = prefix_of(mj, frames)

    # Joints by name: MuJoCo's hinge and slide joints against Pinocchio's 1-DoF joints, free
    # joints against free-flyers.
    joints = []  # (pin joint id, MuJoCo joint id)
    free = []
    for j in range(1, model.njoints):
        name = model.names[j]
        if model.joints[j].nq == 7:
            mj_name = prefix + ("floating_base" if name == "root_joint" else name)
            jid = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, mj_name)
            if jid < 0:
                raise Skipped(f"free joint '{name}' is not in the export")
            free.append((j, jid))
            continue
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
        for j, jid in free:
            adr, i = mj.jnt_qposadr[jid], model.joints[j].idx_q
            xyz = rng.uniform(-1, 1, 3)
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)  # w, x, y, z
            qpos[adr:adr + 3], qpos[adr + 3:adr + 7] = xyz, quat
            q[i:i + 3], q[i + 3:i + 7] = xyz, [quat[1], quat[2], quat[3], quat[0]]
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

    def merged(bodies, frame):
        """MuJoCo's bodies as one rigid inertial in `frame`: mass, centre of mass, rotational
        inertia about it; None without mass."""
        mass = sum(mj.body_mass[b] for b in bodies)
        if mass <= 0.0:
            return None
        com = sum(mj.body_mass[b] * mjd.xipos[b] for b in bodies) / mass
        inertia = np.zeros((3, 3))
        for b in bodies:
            R = mjd.ximat[b].reshape(3, 3)
            d = mjd.xipos[b] - com
            inertia += R @ np.diag(mj.body_inertia[b]) @ R.T + mj.body_mass[b] * (d @ d * np.eye(3) - np.outer(d, d))
        lever = frame.rotation.T @ (com - frame.translation)
        return mass, lever, frame.rotation.T @ inertia @ frame.rotation

    for j in range(model.njoints):
        links = [name for name, f in frames.items() if model.frames[f].parentJoint == j]
        bodies = [(name, mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, prefix + name)) for name in links]
        bodies = [(name, b) for name, b in bodies if b >= 0]
        repaired_links = [name for name in links if name in repaired]
        for name in repaired_links:
            exceptions.append(f"{name}: inertial repaired ({repaired[name]})")
        # MuJoCo's minimum body mass on a link the URDF leaves massless.
        minimal = [(name, b) for name, b in bodies if mj.body_mass[b] <= 1e-6]
        for name, b in minimal:
            exceptions.append(f"{name}: massless in the URDF, {mj.body_mass[b]:.0e} kg in MuJoCo (its minimum body mass): left out of the comparison")
        massive = [b for name, b in bodies if (name, b) not in minimal]
        reference = model.inertias[j].copy()
        if not repaired_links and massive:
            mass, lever, inertia = merged(massive, frame=data.oMi[j])
            worst["mass"] = max(worst["mass"], abs(mass - reference.mass) / reference.mass)
            worst["com m"] = max(worst["com m"], np.abs(lever - reference.lever).max())
            scale = max(np.abs(reference.inertia).max(), 1e-12)
            worst["inertia"] = max(worst["inertia"], np.abs(inertia - reference.inertia).max() / scale)
        if repaired_links or minimal:
            # The exception explained: Pinocchio's joint takes MuJoCo's inertial of its links,
            # so that the mass matrix and gravity below differ only if something else does.
            composite = merged([b for _, b in bodies], frame=data.oMi[j])
            if composite is not None:
                model.inertias[j] = pin.Inertia(*composite)
    for j, jid in joints:
        joint = model.joints[j]
        # The joint's motion subspace, in its own frame: (linear, angular).
        S = np.asarray(data.joints[j].S).reshape(6)
        axis = S[3:] if np.abs(S[3:]).max() > 0 else S[:3]
        # In the joint frame: Pinocchio's frame is the URDF joint frame, MuJoCo's the body's.
        worst["axis"] = max(worst["axis"], np.abs(axis - mj.jnt_axis[jid]).max())
        if mj.jnt_limited[jid]:
            i = joint.idx_q
            lo, hi = model.lowerPositionLimit[i], model.upperPositionLimit[i]
            worst["limit"] = max(worst["limit"], abs(lo - mj.jnt_range[jid][0]), abs(hi - mj.jnt_range[jid][1]))

    # Dynamics of fixed-base robots: M(q) and g(q), dof by dof in Pinocchio's order.
    worst.update({"M": None, "g": None})
    if not free and joints and len(joints) == model.nv:
        dofs = [mj.jnt_dofadr[jid] for _, jid in sorted(joints, key=lambda p: model.joints[p[0]].idx_v)]
        dofs = np.array(dofs, dtype=int)
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
    """Whether a row meets the targets."""
    w = row["worst"]
    ok = (w["frame m"] <= TARGETS["frame"] and w["frame rad"] <= TARGETS["frame"]
          and w["mass"] <= TARGETS["inertial"] and w["com m"] <= TARGETS["inertial"]
          and w["inertia"] <= TARGETS["inertial"] and w["axis"] <= TARGETS["frame"]
          and w["limit"] <= TARGETS["frame"])
    if w["M"] is not None:
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
            if value is not None and value > worst.get(key, (-1, ""))[0]:
                worst[key] = (value, name)
        cells = " ".join(f"{'-' if w[k] is None else format(w[k], '.1e'):>8}"
                         for k in ("frame m", "frame rad", "mass", "com m", "inertia", "axis", "limit", "M", "g"))
        print(f"{name[-44:]:44} {category:9} {row['dof']:>3} {cells}  {'yes' if within(row) else 'NO'}")
    print(f"\n{len(rows)} robots compared, {sum(within(r) for _, r in rows)} within the targets "
          f"(frames and unrepaired inertials 1e-9, mass matrix and gravity 1e-6 relative); {len(skipped)} not compared.")
    print(f"export round trip: each of the {len(rows)} robots' --export-mjcf file loaded back into the "
          f"bridge's model (sizes, masses, inertias, frames, axes, ranges, gains, poses at qpos0), "
          f"as the bridge checks before it says so.")
    print("worst of each kind: " + "; ".join(f"{k} {v:.1e} ({n})" for k, (v, n) in worst.items()))
    exceptions = [(n, e) for n, r in rows for e in r["exceptions"]]
    if exceptions:
        repairs = sum("repaired" in e for _, e in exceptions)
        print(f"\n{len(exceptions)} exceptions: {repairs} links whose inertial the bridge repaired, "
              f"{len(exceptions) - repairs} massless links given MuJoCo's minimum mass; each explained "
              f"(Pinocchio given MuJoCo's inertial of them, the mass matrix and gravity within the target):")
        for name, e in exceptions:
            print(f"  {name}: {e}")
    if skipped:
        print("\nnot compared:")
        for name, why in skipped:
            print(f"  {name}: {why}")
    return 0 if rows else 2


if __name__ == "__main__":
    sys.exit(main())
