"""Parameters like any ROS node's, driven with the real `ros2 param` CLI: every config field
declared with a descriptor, read-only where a change needs a restart; live ones (sim.mode,
sim.speed, publisher rates, gains, ros.wrench_duration, use_sim_time) take effect at once;
a refused set says why."""
import re
import time

import pytest

from conftest import Bridge, needs_ros2_cli, ros2, spin_until

pytestmark = needs_ros2_cli
NODE = "/mujoco_bridge"


def param(*args, check=True):
    """`ros2 param VERB /mujoco_bridge ARGS...`, waiting up to 20 s for the node to be
    discovered (`list` has no such option: it looks for 3 s, up to six times)."""
    verb, *rest = args
    if verb == "list":
        # No waiting option: look again while discovery has not found the node.
        for _ in range(6):
            run = ros2("param", verb, "--no-daemon", "--spin-time", "3", NODE, *rest, check=False)
            if "Node not found" not in run.stdout + run.stderr:
                break
    else:
        run = ros2("param", verb, "--no-daemon", "--timeout", "20", NODE, *rest, check=False)
    if check:
        assert run.returncode == 0, f"ros2 param {verb}: exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    return run.stdout + run.stderr  # a refused set is reported on stderr


@pytest.fixture(scope="module")
def bridge():
    b = Bridge("panda.yaml")  # starts paused
    yield b
    b.close()


def real_time_factors(ros, seconds):
    """The real-time factors /diagnostics reports over `seconds`."""
    from diagnostic_msgs.msg import DiagnosticArray

    factors = []

    def on_array(array):
        for status in array.status:
            for item in status.values:
                if item.key == "real_time_factor":
                    factors.append(float(item.value))

    subscription = ros.create_subscription(DiagnosticArray, "/diagnostics", on_array, 10)
    deadline = time.monotonic() + seconds
    spin_until(ros, lambda: time.monotonic() > deadline, timeout=seconds + 5, what="diagnostics")
    ros.destroy_subscription(subscription)
    return factors


def test_every_config_field_is_listed_and_described(bridge):
    names = param("list").split()
    for name in ("config", "use_sim_time", "sim.speed", "sim.mode", "world.timestep", "ros.rates.joint_states",
                 "robots.0.name", "robots.0.control.gains.kp", "ros.wrench_duration"):
        assert name in names, f"{name} not in {names}"
    assert "Double value is: 1.0" in param("get", "sim.speed")
    assert "String value is: panda" in param("get", "robots.0.name")
    live = param("describe", "sim.mode")
    assert "Type: string" in live and "realtime | fast | paused" in live and "Read only" not in live, live
    fixed = param("describe", "world.timestep")
    assert "Type: double" in fixed and "Read only: true" in fixed, fixed
    dumped = param("dump")
    assert re.search(r"mujoco_bridge:\n  ros__parameters:\n", dumped), dumped[:300]
    assert re.search(r"\n    sim:\n(      .*\n)*      speed: 1\.0\n", dumped), dumped


def test_sim_speed_set_live_changes_the_real_time_factor(ros, bridge):
    assert "Set parameter successful" in param("set", "sim.mode", "realtime")
    assert "Set parameter successful" in param("set", "sim.speed", "0.5")
    real_time_factors(ros, 1.5)  # the window of the figure moves past the change
    slow = real_time_factors(ros, 3)
    assert "Set parameter successful" in param("set", "sim.speed", "1")  # an integer, as typed
    real_time_factors(ros, 1.5)
    normal = real_time_factors(ros, 3)
    print(f"sim.speed 0.5: /diagnostics real_time_factor {slow}; sim.speed 1: {normal}")
    # A loaded 2-core machine may lag a moment: the median follows the set speed.
    assert slow and 0.4 < sorted(slow)[len(slow) // 2] < 0.6, slow
    assert normal and 0.8 < sorted(normal)[len(normal) // 2] < 1.1, normal
    assert "Double value is: 1.0" in param("get", "sim.speed")
    assert "Set parameter successful" in param("set", "sim.mode", "paused")
    # Paused: the clock stands still.
    before = bridge.stats()["time"]
    time.sleep(0.3)
    assert bridge.stats()["time"] == before


def test_refused_sets_say_why_and_change_nothing(bridge):
    cases = {
        ("world.timestep", "0.001"): "parameter 'world.timestep' is read-only",
        ("sim.speed", ".nan"): "is not a finite number",  # YAML's NaN and infinity
        ("ros.rates.tf", ".inf"): "is not a finite number",
        ("sim.speed", "-1.0"): "out of range (0.001 to 1000)",
        ("sim.speed", "0.000000001"): "out of range (0.001 to 1000)",
        ("ros.rates.diagnostics", "1.0e-20"): "out of range (0, or 0.001 to 100000)",
        ("use_sim_time", "false"): "it stays true",
        ("sim.speed", "fast"): "takes a double, not a string",
        ("sim.mode", "sideways"): "'sideways' is not one of realtime, fast, paused",
        ("no.such.parameter", "1"): "parameter 'no.such.parameter' is not declared",
    }
    for (name, value), reason in cases.items():
        out = param("set", name, value, check=False)
        assert "Setting parameter failed" in out and reason in out, f"{name}={value}: {out}"
    assert "Double value is: 1.0" in param("get", "sim.speed")
    assert "Double value is: 0.002" in param("get", "world.timestep")


def test_a_publisher_rate_set_live_changes_how_often_it_publishes(ros, bridge):
    from sensor_msgs.msg import JointState

    def rate_over(seconds):
        stamps = []
        subscription = ros.create_subscription(JointState, "/joint_states", lambda m: stamps.append(time.monotonic()), 100)
        spin_until(ros, lambda: len(stamps) >= 2, what="joint_states")
        start, count = time.monotonic(), len(stamps)
        spin_until(ros, lambda: time.monotonic() - start > seconds, timeout=seconds + 5)
        ros.destroy_subscription(subscription)
        return (len(stamps) - count) / seconds

    before = rate_over(2)
    assert "Set parameter successful" in param("set", "ros.rates.joint_states", "0.001")
    assert "Set parameter successful" in param("set", "ros.rates.joint_states", "10")
    after = rate_over(3)
    # From a thousand-second period straight back to a fast one: the new rate holds at once.
    assert "Set parameter successful" in param("set", "ros.rates.joint_states", "100.0")
    again = rate_over(2)
    assert before > 60 and 6 < after < 14 and again > 60, (before, after, again)


def test_gains_wrench_duration_and_use_sim_time_are_accepted(bridge):
    assert "Set parameter successful" in param("set", "robots.0.control.gains.kp", "50.0")
    assert "Double value is: 50.0" in param("get", "robots.0.control.gains.kp")
    assert "Set parameter successful" in param("set", "ros.wrench_duration", "0.5")
    assert "Set parameter successful" in param("set", "use_sim_time", "true")
    out = param("set", "robots.0.control.gains.kv", "-1.0", check=False)
    assert "out of range (>= 0)" in out, out
