"""kill -9 at random moments, KILLS times each (MUJOCO_BRIDGE_KILLS, 25 in the suite; a longer
run is the same file with a larger count): while snapshot files are being saved, the file is
always a whole snapshot, the last one the console acknowledged or a newer one, and it
restores; while a CSV recording runs, the file holds every row up to its last flush (the
recorder flushes every 0.5 s) and plays back, a torn last line included."""
import os
import random
import select
import signal
import subprocess
import time

from conftest import BINARY, REPO

KILLS = int(os.environ.get("MUJOCO_BRIDGE_KILLS", "25"))
WORLD = """
world: {timestep: 0.002, floor: true}
robots:
  - name: rig
    mjcf_string: |
      <mujoco><worldbody>
        <body name="arm" pos="0 0 1"><joint name="swing" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="1"/></body>
        <body name="ball" pos="1 0 1"><freejoint/><geom size="0.1" mass="1"/></body>
      </worldbody></mujoco>
"""


def start(config, *args):
    return subprocess.Popen(
        [BINARY, "--config", str(config), "--console", "--set", "zmq.enabled=false", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO,
        env=dict(os.environ, RUST_LOG="warn"),
    )


def ask(proc, line, timeout=30):
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no reply to {line!r}"
    return proc.stdout.readline().strip()


def killed(proc):
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def restored_time(config, snapshot):
    """The sim time a new bridge resumes at from `snapshot` (it steps 10 steps from it), or
    the reason it could not."""
    run = subprocess.run([BINARY, "--config", str(config), "--load-snapshot", str(snapshot), "--steps", "10",
                          "--set", "zmq.enabled=false"], capture_output=True, text=True, cwd=REPO, timeout=60)
    if run.returncode != 0:
        return None, run.stderr[-2000:]
    report = run.stdout.split("sim time ")[1]
    return float(report.split()[0]) - 10 * 0.002, ""


def test_a_snapshot_file_is_the_old_one_or_the_new_one_whenever_the_process_is_killed(tmp_path):
    config = tmp_path / "world.yaml"
    config.write_text(WORLD)
    snapshot = tmp_path / "state.snapshot"
    rng = random.Random(23)
    acknowledged_before = []
    for kill in range(KILLS):
        proc = start(config, "--mode", "fast")
        ask(proc, "stats", timeout=60)
        deadline = time.monotonic() + rng.uniform(0.02, 0.4)
        acknowledged = None
        # Saves back to back; the kill lands in one of them (or between two).
        while time.monotonic() < deadline:
            reply = ask(proc, f"savefile {snapshot}")
            assert reply.startswith("ok step"), reply
            acknowledged = int(reply.split()[2])
        proc.stdin.write(f"savefile {snapshot}\n")
        proc.stdin.flush()
        time.sleep(rng.uniform(0.0, 0.005))
        killed(proc)
        acknowledged_before.append(acknowledged)
        resumed, why = restored_time(config, snapshot)
        assert resumed is not None, f"kill {kill}: the snapshot does not restore: {why}"
        # The last save acknowledged is on disk, or a newer one (the one killed midway).
        if acknowledged is not None:
            assert resumed >= acknowledged * 0.002 - 1e-9, (kill, resumed, acknowledged)
    print(f"{KILLS} kills while saving snapshots: every file whole, restoring, and at least as new as the "
          f"last save acknowledged ({sum(a is not None for a in acknowledged_before)} kills after one)")


def rows_of(path):
    text = path.read_text()
    lines = text.split("\n")
    torn = not text.endswith("\n")
    complete = lines[1:-1] if torn or lines[-1] == "" else lines[1:]
    times = [float(line.split(",")[0]) for line in complete if line]
    return times, torn


def test_a_recording_holds_every_row_up_to_its_last_flush_whenever_the_process_is_killed(tmp_path):
    config = tmp_path / "world.yaml"
    config.write_text(WORLD)
    rng = random.Random(29)
    torn_files = 0
    worst_loss = 0.0
    for kill in range(KILLS):
        recording = tmp_path / f"run{kill}.csv"
        proc = start(config, "--mode", "realtime", "--record", str(recording))
        ask(proc, "stats", timeout=60)
        time.sleep(rng.uniform(0.1, 1.5))
        sim_time = float(ask(proc, "stats").split()[4])
        killed(proc)
        times, torn = rows_of(recording)
        torn_files += torn
        # Every row up to the last flush is there: at most 1 s short (the recorder flushes
        # every 0.5 s; the rest is the kill's own delay on a busy machine).
        loss = sim_time - (times[-1] if times else 0.0)
        worst_loss = max(worst_loss, loss)
        assert loss <= 1.0, f"kill {kill}: rows end at {times[-1] if times else None}, sim time was {sim_time}"
        if times:
            # It plays back, torn line and all (a replay asked for more steps than the file
            # holds ends in an error, so at most as many as it holds).
            steps = str(min(5, len(times)))
            run = subprocess.run([BINARY, "--config", str(config), "--replay", str(recording), "--steps", steps,
                                  "--set", "zmq.enabled=false"], capture_output=True, text=True, cwd=REPO,
                                 timeout=60)
            assert run.returncode == 0, f"kill {kill}: playback failed: {run.stderr[-2000:]}"
    print(f"{KILLS} kills while recording: every file plays back; {torn_files} ended in a torn line; "
          f"at most {worst_loss:.3f} s of sim time lost (flush period 0.5 s)")
