"""A ROS 2 workspace builds the package with a plain `colcon build` (colcon-ros-cargo), and
the installed node runs: rclpy receives its /clock, and `ros2 launch` starts it from the
install prefix."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import REPO, ROS2

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_COLCON") != "1", reason="colcon is not installed (scripts/setup-colcon.sh)"
)


def seed_dependencies(build_base):
    """Starts colcon's cargo target folder from the checkout's compiled dependencies, as a CI
    cache would: the package itself (at another path, so under other hashes) is compiled
    anew, the few hundred registry crates are not (six minutes of this test on 2 cores).
    The compiler's artifacts are hard links (rustc replaces an output, it never writes into
    it; on another file system the build starts from nothing). The build scripts' folders
    and the fingerprints are copied: cargo and the build scripts write those in place, and
    mujoco-rs's script, run again for this MuJoCo path, rewrote the checkout's own `output`
    through a link."""
    built = REPO / "target" / "debug"
    if not (built / "deps").is_dir():
        return
    seeded = build_base / "debug"
    seeded.mkdir(parents=True)
    if subprocess.run(["cp", "-al", str(built / "deps"), str(seeded / "deps")]).returncode != 0:
        # Another file system: no links; the build starts from nothing.
        shutil.rmtree(seeded)
        return
    for folder in ("build", ".fingerprint"):
        shutil.copytree(built / folder, seeded / folder, symlinks=True)


def test_plain_colcon_build_gives_a_working_node(tmp_path):
    package = tmp_path / "src" / "mujoco_bridge"
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        target = package / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    # MuJoCo from the wheel, as scripts/setup-mujoco.sh leaves it in a checkout.
    (package / ".deps").mkdir()
    (package / ".deps" / "mujoco").symlink_to(REPO / ".deps" / "mujoco")
    seed_dependencies(tmp_path / "build" / "mujoco_bridge")
    tools = f"{REPO}/.deps/colcon/bin:{REPO}/.deps/cargo/bin"
    build = subprocess.run(
        ["bash", "-c", f". {REPO}/scripts/ros-env.sh && PATH={tools}:$PATH colcon build --event-handlers console_direct-"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1800,
        env=dict(os.environ, CARGO_NET_OFFLINE="true"),
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "Finished <<< mujoco_bridge" in build.stdout
    installed = tmp_path / "install" / "mujoco_bridge"
    binary = installed / "lib" / "mujoco_bridge" / "mujoco_bridge"
    for shared in ("launch", "config", "urdf", "package.xml"):
        assert (installed / "share" / "mujoco_bridge" / shared).exists(), shared

    import rclpy
    from rosgraph_msgs.msg import Clock

    node_process = subprocess.Popen([str(binary), "--duration", "20"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
    rclpy.init()
    try:
        node = rclpy.create_node("colcon_probe")
        stamps = []
        node.create_subscription(Clock, "/clock", lambda m: stamps.append(m.clock.sec + m.clock.nanosec * 1e-9), 10)
        while len(stamps) < 20 or stamps[-1] <= 0.0:
            assert node_process.poll() is None, "the installed node exited"
            rclpy.spin_once(node, timeout_sec=0.1)
        assert stamps[-1] > 0.0, "the installed node runs and publishes sim time"
        node.destroy_node()
    finally:
        rclpy.shutdown()
        node_process.terminate()
        node_process.wait(timeout=30)

    if ROS2.exists():
        from test_launch import launched

        # The prefix colcon made, as a user sources it.
        states, _ = launched(installed, "robot:=default", "headless:=true")
        assert "left_wheel_joint" in states, states
