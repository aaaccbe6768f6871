"""The soak benchmark's short version (benches/soak.py, 2 minutes): spawns and deletes every
3 s, every subscription destroyed and made again each second (the camera's too, in 15 s
phases, its render memory released 5 s after the last request), legacy subscribers
reconnecting, cmd_vel at 20 Hz, parameters, snapshots and resets. The bridge's memory does
not grow by more than 5 % after the first minute, every request is answered, and the
bridge is alive at the end. The first minute is warm-up: the memory steps up once in it
(about 5 MB, the first /clock hand-over and the first camera phases among it) and stays
level after, in this run (idle 155.0, 160.3, 159.9 MB) as in the 12-minute benchmark. (Timing figures, /clock gaps and the real-time factor, are the
benchmark's to measure on a release build: scripts/bench-soak.sh.)"""
import os
import sys

import pytest

from conftest import BINARY, REPO

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

sys.path.insert(0, str(REPO / "benches"))
import soak  # noqa: E402


def test_two_minutes_of_churn_leave_memory_flat_and_every_request_answered():
    figures = soak.run(BINARY, REPO / "config" / "default.yaml", minutes=2.0, warmup_minutes=1.0,
                       camera_on=15.0, camera_off=15.0, client_nice=0,
                       extra_args=["--set", "render.idle_release=5"])
    soak.summary(figures)
    assert figures["alive"], figures["log_tail"]
    assert figures["sent"] > 50 and figures["answered"] == figures["sent"], figures["failed"]
    assert figures["received"] > 0 and figures["legacy_received"] > 0
    streaming = figures["phases"].get("streaming", [])
    assert len(streaming) >= 2 and len(figures["phases"].get("idle", [])) >= 2, figures["phases"]
    assert figures["growth_after_warmup"] < 0.05, figures["phases"]
    # The render memory went and came back: idle phases end below streaming ones.
    idle = figures["phases"]["idle"]
    assert sum(idle) / len(idle) < sum(streaming) / len(streaming), figures["phases"]
    log = figures["log"]
    assert "resources released after 5 s without a request" in log
    assert "panicked" not in log
