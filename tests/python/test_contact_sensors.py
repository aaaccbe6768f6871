"""Contact sensors (ros_gz_interfaces/Contacts and the std_msgs/Bool flag), read back from an
MCAP recording by the official readers, against MuJoCo's own contact list: the same model
stepped here by MuJoCo's Python bindings, step for step. A box rests on the ground (its
contacts carry its weight) and a ball, the foot, drops onto it from 0.45 m (the flag turns on
once the force has held for the debounce)."""

import mujoco
import numpy as np
import pytest

from test_mcap import by_topic, run_bridge

TIMESTEP = 0.002
MJCF = """<mujoco><option timestep="0.002"/><worldbody>
  <geom name="ground" type="plane" size="5 5 0.1"/>
  <body name="box" pos="0 0 0.1"><freejoint/>
    <geom name="box_geom" type="box" size="0.1 0.1 0.1" mass="2"/></body>
  <body name="ball" pos="1 0 0.5"><freejoint/>
    <geom name="foot" type="sphere" size="0.05" mass="0.5"/></body>
</worldbody></mujoco>"""
WORLD = """
world: {timestep: 0.002}
robots:
  - name: rig
    mjcf_string: |
MODEL
    contacts:
      - {name: box_contact, body: box, rate: 50}
      - {name: foot_contact, geom: foot, rate: 500, threshold: 2.0, debounce: 0.01}
"""


def record(tmp_path, seconds):
    config = tmp_path / "contacts.yaml"
    model = "\n".join("      " + line for line in MJCF.splitlines())
    config.write_text(WORLD.replace("MODEL", model))
    path = tmp_path / "contacts.mcap"
    run_bridge("--config", str(config), "--set", "zmq.enabled=false", "--mode", "fast",
               "--duration", str(seconds), "--mcap", str(path))
    return by_topic(path)


def mujoco_contacts(seconds):
    """{step: [(watched geom, other geom, position, normal toward the watched geom, depth,
    force on the watched geom)]} of MuJoCo's contact list after each step."""
    model = mujoco.MjModel.from_xml_string(MJCF)
    data = mujoco.MjData(model)
    name = lambda g: mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g)  # noqa: E731
    steps = {}
    mujoco.mj_forward(model, data)
    for step in range(round(seconds / TIMESTEP) + 1):
        if step:
            mujoco.mj_step(model, data)
        seen = []
        for k in range(data.ncon):
            c = data.contact[k]
            force = np.zeros(6)
            mujoco.mj_contactForce(model, data, k, force)
            frame = c.frame.reshape(3, 3)
            on_second = frame.T @ force[:3]
            for watched, other, sign in ((c.geom2, c.geom1, 1.0), (c.geom1, c.geom2, -1.0)):
                seen.append((name(watched), name(other), c.pos.copy(), sign * frame[0],
                             -c.dist, sign * on_second))
        steps[step] = seen
    return steps


def test_contacts_match_mujocos_contact_list_and_the_foot_flag_waits_for_its_debounce(tmp_path):
    seconds = 1.0
    decoded = record(tmp_path, seconds)
    truth = mujoco_contacts(seconds)
    assert {s for _, s, _ in decoded["/box_contact"]} == {"ros_gz_interfaces/msg/Contacts"}
    assert len(decoded["/box_contact"]) == 51 and len(decoded["/foot_contact"]) == 501
    points = 0
    for topic, geom in (("/box_contact", "box_geom"), ("/foot_contact", "foot")):
        for stamp, _, message in decoded[topic]:
            step = round(stamp * 1e-9 / TIMESTEP)
            expected = [c for c in truth.get(step, []) if c[0] == geom]
            got = [(pair, k) for pair in message.contacts for k in range(len(pair.positions))]
            assert len(got) == len(expected), (topic, step)
            assert message.header.frame_id == "world"
            for (pair, k), (watched, other, position, normal, depth, force) in zip(got, expected):
                assert pair.collision1.name.endswith(f"::{watched}"), pair.collision1.name
                assert pair.collision2.name.endswith(f"::{other}") and pair.collision1.type == 5
                vec = lambda v: np.array([v.x, v.y, v.z])  # noqa: E731
                assert np.allclose(vec(pair.positions[k]), position, atol=1e-9)
                assert np.allclose(vec(pair.normals[k]), normal, atol=1e-9)
                assert pair.depths[k] == pytest.approx(depth, abs=1e-9)
                wrench = pair.wrenches[k]
                assert np.allclose(vec(wrench.body_1_wrench.force), force, atol=1e-6)
                assert np.allclose(vec(wrench.body_2_wrench.force), -force, atol=1e-6)
                assert wrench.body_1_name.data == pair.collision1.name
                points += 1
    # The box at rest: its contacts carry its weight, pushing it up.
    _, _, last = decoded["/box_contact"][-1]
    lift = sum(w.body_1_wrench.force.z for pair in last.contacts for w in pair.wrenches)
    assert lift == pytest.approx(2 * 9.81, rel=0.01), lift
    assert all(n.z > 0.999 for pair in last.contacts for n in pair.normals)
    # The foot: the flag follows its normal force against 2 N once that has held for 10 ms
    # (six samples at 500 Hz): whenever six samples agree, the flag agrees, and it changes
    # only then. The landing holds long enough to turn it on 10 ms after the touch.
    force = {step: sum(c[5] @ c[3] for c in contacts if c[0] == "foot")
             for step, contacts in truth.items()}
    flags = {round(stamp * 1e-9 / TIMESTEP): m.data
             for stamp, _, m in decoded["/foot_contact/in_contact"]}
    assert sorted(flags) == sorted(force)
    raw = {step: f >= 2.0 for step, f in force.items()}
    changes = 0
    for step in sorted(flags)[5:]:
        window = {raw[s] for s in range(step - 5, step + 1)}
        if len(window) == 1:
            assert flags[step] == raw[step], step
        if flags[step] != flags[step - 1]:
            assert window == {flags[step]}, step
            changes += 1
    first = min(step for step in raw if raw[step])
    on = min(step for step in flags if flags[step])
    assert on == first + 5 and changes >= 1
    print(f"{points} contact points equal to MuJoCo's; the box carries {lift:.3f} N; the foot "
          f"touches at {first * TIMESTEP:.3f} s, its flag turns on at {on * TIMESTEP:.3f} s and "
          f"changes {changes} times in {seconds} s")
