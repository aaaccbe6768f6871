"""The --viewer window, as a person sees and uses it: under Xvfb, a screenshot of the real
window (xwd) shows the robot drawn where it stands; keys pressed with xdotool pause, step,
step back, run and reset the simulation; a body spawned meanwhile appears in the window; a
ctrl + right drag on the body pushes it through the wrench path (the recording shows it
lifted). Without a display, --viewer says so in one line and the bridge runs on; a display
that goes away takes only the window."""
import os
import select
import shutil
import struct
import subprocess
import time

import numpy as np
import pytest

from conftest import BINARY, bridge_of

TOOLS = {name: shutil.which(name) for name in ("Xvfb", "xwd", "xdotool")}
pytestmark = pytest.mark.skipif(
    not all(TOOLS.values()),
    reason="Xvfb, xwd and xdotool are not installed (scripts/setup-viewer.sh installs them)",
)

# A red box on the floor, where the free camera looks; without gravity, so that the mouse's
# gentle spring moves it.
BOX_WORLD = """
world: {timestep: 0.002, floor: true, light: true, gravity: [0, 0, 0]}
robots:
  - name: crate
    mjcf_string: |
      <mujoco><worldbody>
        <body name="box" pos="0 0 0.15"><freejoint name="float"/>
          <geom type="box" size="0.15 0.15 0.15" rgba="1 0 0 1" mass="2"/></body>
      </worldbody></mujoco>
"""


@pytest.fixture
def xvfb(monkeypatch):
    """A private X server (Xvfb, on a display number it picks itself, in `.display`);
    DISPLAY names it."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen([TOOLS["Xvfb"], "-displayfd", str(write_end), "-screen", "0", "1280x800x24",
                               "-nolisten", "tcp"], pass_fds=(write_end,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    said = b""
    deadline = time.monotonic() + 20
    while not said.endswith(b"\n"):
        ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
        assert ready and server.poll() is None, "Xvfb did not start"
        said += os.read(read_end, 16)
    os.close(read_end)
    server.display = f":{said.decode().strip()}"
    monkeypatch.setenv("DISPLAY", server.display)
    yield server
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def display(xvfb):
    return xvfb.display


def screen(display):
    """The whole screen as an (height, width, 3) RGB array, through xwd."""
    raw = subprocess.run([TOOLS["xwd"], "-root", "-silent", "-display", display],
                         capture_output=True, check=True, timeout=30).stdout
    fields = struct.unpack(">25I", raw[:100])
    header, width, height, byte_order, bytes_per_line, colors = (
        fields[0], fields[4], fields[5], fields[7], fields[12], fields[19])
    start = header + 12 * colors
    pixels = np.frombuffer(raw[start:start + bytes_per_line * height], dtype="<u4" if byte_order == 0 else ">u4")
    pixels = pixels.reshape(height, bytes_per_line // 4)[:, :width]
    return np.stack([(pixels >> 16) & 255, (pixels >> 8) & 255, pixels & 255], axis=-1).astype(np.int32)


def xdotool(*args):
    subprocess.run([TOOLS["xdotool"], *map(str, args)], check=True, timeout=30)


def wait_for(predicate, what, timeout=30, now=lambda: ""):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what} {now()}"
        time.sleep(0.05)


def test_viewer_draws_the_robot_and_keys_and_mouse_drive_the_simulation(display, tmp_path):
    recording = tmp_path / "run.csv"
    bridge = bridge_of(tmp_path, BOX_WORLD, ["--viewer", "--record", str(recording)])
    try:
        wait_for(lambda: "viewer: a window" in bridge.log_so_far(), "the window")

        def is_red(pixels):  # lit or shaded faces of the box; the floor and sky are grey
            r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
            return (r > 80) & (r > 3 * g) & (r > 3 * b)

        # The red box stands in the middle of the 1280x720 window; the background is grey.
        shots = []

        def middle_red():
            shots.append(screen(display))
            return is_red(shots[-1][300:420, 580:700]).mean()

        wait_for(lambda: middle_red() > 0.9, "the box in the middle of the window", 30,
                 lambda: f"({middle_red():.2f} red)")
        corner = shots[-1][100:150, 100:150]
        assert not is_red(corner).any(), "red outside the box"
        window = subprocess.run([TOOLS["xdotool"], "search", "--name", "mujoco_bridge"],
                                capture_output=True, text=True, check=True).stdout.split()[0]
        xdotool("windowfocus", "--sync", window)
        xdotool("mousemove", 640, 360)

        def time_now():
            return bridge.stats()["time"]

        # Paused (the bridge starts so here): the right arrow steps, the left steps back.
        # (Without a window manager the focus may come late: the first key is sent until
        # it lands.)
        first = time_now()
        for _ in range(5):
            xdotool("key", "Right")
            try:
                wait_for(lambda: time_now() > first, "the first step", 2)
                break
            except AssertionError:
                xdotool("windowfocus", "--sync", window)
        time.sleep(0.3)
        start = time_now()
        for _ in range(2):
            xdotool("key", "Right")
        wait_for(lambda: time_now() == pytest.approx(start + 0.004), "two steps", 10,
                 lambda: f"(time {time_now()} from {start})")
        xdotool("key", "Left")
        wait_for(lambda: time_now() == pytest.approx(start + 0.002), "a step back")
        # Space runs (in real time) and pauses again.
        xdotool("key", "space")
        wait_for(lambda: time_now() > start + 0.3, "running")
        xdotool("key", "space")
        time.sleep(0.3)
        paused_at = time_now()
        time.sleep(0.5)
        assert time_now() == paused_at, "space paused it"
        # Backspace resets.
        xdotool("key", "BackSpace")
        wait_for(lambda: time_now() == 0.0, "the reset")
        # A world change: the viewer draws the new world (a green box spawned beside).
        green = tmp_path / "green.xml"
        green.write_text("<mujoco><worldbody><body name='g'><freejoint/>"
                         "<geom type='box' size='0.1 0.1 0.1' rgba='0 1 0 1'/></body></worldbody></mujoco>")
        bridge.console(f"spawn {green} greenbox 0 0.5 0.1", timeout=120)

        def green_pixels():
            shot = screen(display)
            r, g, b = shot[..., 0], shot[..., 1], shot[..., 2]
            return int(((g > 80) & (g > 3 * r) & (g > 3 * b)).sum())

        wait_for(lambda: green_pixels() > 500, "the spawned box in the window", 30)
        # Running, a double click selects the box and a ctrl + right drag upwards lifts it.
        xdotool("key", "space")
        wait_for(lambda: time_now() > 0.2, "running again")
        xdotool("mousemove", 640, 330)
        xdotool("click", "--repeat", 2, "--delay", 60, 1)
        time.sleep(0.3)
        xdotool("keydown", "ctrl", "mousedown", 3)
        for _ in range(10):
            xdotool("mousemove_relative", "--", 0, -15)
            time.sleep(0.03)
        time.sleep(1.5)
        xdotool("mouseup", 3, "keyup", "ctrl")
        time.sleep(0.5)
        assert "panicked" not in bridge.log_so_far()
    finally:
        log = bridge.close()
    assert "panicked" not in log, log[-3000:]
    header, *rows = recording.read_text().splitlines()
    z = header.split(",").index("crate_float[2]")
    heights = [float(row.split(",")[z]) for row in rows]
    assert heights[0] == pytest.approx(0.15, abs=1e-3)
    assert max(heights) > 0.2, f"the drag lifted the box: highest {max(heights):.3f} m (rests at 0.15)"


def test_viewer_without_a_display_says_so_and_the_bridge_runs_on():
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    run = subprocess.run([BINARY, "--viewer", "--steps", "50"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    said = [line for line in run.stderr.splitlines() if "viewer" in line]
    assert len(said) == 1 and "no display" in said[0], said
    assert "steps 50" in run.stdout


def test_a_display_that_goes_away_takes_only_the_window(xvfb, tmp_path):
    bridge = bridge_of(tmp_path, BOX_WORLD, ["--viewer"])
    try:
        wait_for(lambda: "viewer: a window" in bridge.log_so_far(), "the window")
        bridge.console("realtime")
        xvfb.terminate()
        xvfb.wait(timeout=10)
        wait_for(lambda: "connection to the display broke" in bridge.log_so_far(), "the viewer to say so",
                 now=lambda: bridge.log_so_far()[-3000:])
        before = bridge.stats()["steps"]
        wait_for(lambda: bridge.stats()["steps"] > before + 200, "more steps")
    finally:
        log = bridge.close()
    assert bridge.proc.returncode == 0, log[-3000:]
