"""Topics sampled in sim time, read back by the official MCAP readers (`mcap`, with
`mcap-ros2-support` decoding each message from the file's schemas): a rate means per second
of sim time, every message is stamped with the sim time of the step it samples, and a run in
fast mode, sped up, in real time or stepped while paused records the same messages, byte for
byte."""
import array
import collections
import math

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from conftest import Bridge
from test_mcap import run_bridge

TIMESTEP_NS = 2_000_000
RATES = {"/joint_states": 250, "/tf": 100, "/odom": 30, "/clock": 500}
GO1 = [
    "--config", "config/go1.yaml", "--set", "zmq.enabled=false", "--timestep", "0.002",
    *[arg for topic, hz in RATES.items() for arg in ("--set", f"ros.rates.{topic[1:]}={hz}")],
]
# The run's own figures go on the wall clock; everything else (the head camera's frames too)
# is sampled.
UNSAMPLED = ("/diagnostics",)
CAMERA_RATE = 15


def on_steps(hz, count, step_ns=TIMESTEP_NS):
    """The first `count` sample times of a rate: the first step at or after each period."""
    return [math.ceil(n * 1e9 / hz / step_ns - 1e-6) * step_ns for n in range(count)]


def recorded(path):
    """{topic: [(log time, payload)]} of the sampled topics, in the file's order."""
    messages = collections.defaultdict(list)
    with open(path, "rb") as f:
        for _, channel, message in make_reader(f).iter_messages(log_time_order=False):
            if not any(word in channel.topic for word in UNSAMPLED):
                messages[channel.topic].append((message.log_time, bytes(message.data)))
    return messages


def header_stamps(path, topic):
    """The header stamps (ns) of `topic`'s messages, decoded."""
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [
            m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
            for _, _, _, m in reader.iter_decoded_messages(topics=[topic], log_time_order=False)
        ]


def assert_same(reference, other, what):
    assert reference.keys() == other.keys(), what
    for topic, messages in reference.items():
        assert len(other[topic]) == len(messages), f"{what}: {topic} count"
        differing = [k for k, (a, b) in enumerate(zip(messages, other[topic])) if a != b]
        assert not differing, f"{what}: {topic} differs first at message {differing[0]}"


def test_fast_sped_up_and_real_time_runs_record_the_same_messages_on_the_sim_clock(tmp_path):
    runs = {
        "fast": ["--mode", "fast"],
        "speed 4": ["--mode", "realtime", "--speed", "4"],
        "real time": ["--mode", "realtime"],
    }
    messages = {}
    for name, args in runs.items():
        path = tmp_path / f"{name.replace(' ', '_')}.mcap"
        stdout, _ = run_bridge(*GO1, *args, "--duration", "2", "--mcap", str(path))
        # A recording is lossless: the run report says no sample was lost.
        assert stdout.strip().endswith("samples lost 0"), stdout
        messages[name] = recorded(path)
    fast = messages["fast"]
    for topic, hz in RATES.items():
        # Rate times sim seconds, and the start's sample.
        assert len(fast[topic]) == hz * 2 + 1, topic
        # Each at the first step at or after its time (30 Hz: 0, 0.034, 0.068, 0.1, ...).
        times = [t for t, _ in fast[topic]]
        assert times == on_steps(hz, hz * 2 + 1), f"{topic}: on the grid"
    for topic in ("/head/image_raw", "/head/depth/image_raw", "/head/camera_info"):
        # Rendered from the samples of its rate, however long a frame takes.
        times = [t for t, _ in fast[topic]]
        assert times == on_steps(CAMERA_RATE, CAMERA_RATE * 2 + 1), f"{topic}: on the grid"
    for topic in ("/joint_states", "/odom", "/head/image_raw"):
        assert header_stamps(tmp_path / "fast.mcap", topic) == [t for t, _ in fast[topic]]
    for messages_of_run in fast.values():
        assert all(t % TIMESTEP_NS == 0 for t, _ in messages_of_run), "every stamp on the steps"
    assert_same(fast, messages["speed 4"], "speed 4")
    assert_same(fast, messages["real time"], "real time")


def test_a_run_stepped_while_paused_records_what_a_fast_run_of_the_same_steps_does(tmp_path):
    stepped = tmp_path / "stepped.mcap"
    bridge = Bridge("go1.yaml", ["--timestep", "0.002", "--mcap", str(stepped), *GO1[6:]])
    try:
        for _ in range(4):
            bridge.console("step 125")
        # Paused between and after the steps: a recording holds samples, never the held state.
        bridge.console("stats")
    finally:
        bridge.close()
    fast = tmp_path / "fast.mcap"
    run_bridge(*GO1, "--mode", "fast", "--steps", "500", "--mcap", str(fast))
    reference = recorded(fast)
    assert len(reference["/joint_states"]) == 251
    assert_same(reference, recorded(stepped), "stepped")


# A sensor block fixed in the world, at rest: an IMU (gyro, accelerometer with MuJoCo's own
# `noise`; 20 ms of latency in the config), a magnetometer (MuJoCo's own `delay` of 10 ms)
# and a rangefinder looking down at the floor 0.44 m below.
SENSOR_WORLD = """
world: {timestep: 0.002, floor: true}
sim: {seed: SEED}
ros:
  rates: {imu: 200, range: 100}
robots:
  - name: block
    mjcf_string: |
      <mujoco><worldbody>
        <body name="block" pos="0 0 0.5">
          <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
          <site name="imu" size="0.01"/>
          <site name="down" zaxis="0 0 -1" pos="0 0 -0.06"/>
        </body>
        <body name="arm" pos="0.3 0 0.5">
          <joint name="swing" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" contype="0" conaffinity="0"/>
        </body>
      </worldbody>
      <sensor>
        <gyro name="gyro" site="imu"/>
        <accelerometer name="accel" site="imu" noise="0.05"/>
        <magnetometer name="compass" site="imu" delay="0.01" nsample="10"/>
        <rangefinder name="down" site="down"/>
      </sensor></mujoco>
    noise: NOISE
    latency: {gyro: 0.02}
"""
NOISE = """
      gyro: {stddev: 0.01, bias_mean: 0.2, bias_stddev: 0.001}
      compass: {dynamic_bias_stddev: 0.001, dynamic_bias_correlation_time: 1.0}
      down: {type: gaussian_quantized, stddev: 0.02, precision: 0.01}"""
# The same sensors exact: the config's `none` wins over the model's noise too.
EXACT = "{" + ", ".join(f"{s}: {{type: none}}" for s in ("gyro", "accel", "compass", "down")) + "}"


def sensor_run(tmp_path, seed, name, noise=NOISE):
    config = tmp_path / f"{name}.yaml"
    config.write_text(SENSOR_WORLD.replace("SEED", str(seed)).replace("NOISE", noise))
    path = tmp_path / f"{name}.mcap"
    run_bridge("--config", str(config), "--set", "zmq.enabled=false", "--mode", "fast",
               "--duration", "20", "--mcap", str(path))
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        decoded = collections.defaultdict(list)
        for _, channel, _, m in reader.iter_decoded_messages(log_time_order=False):
            decoded[channel.topic].append(m)
    return path, decoded


def spread(values):
    mean = sum(values) / len(values)
    return mean, (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def test_sensor_noise_has_the_statistics_the_model_and_config_state_and_a_seed_fixes_it(tmp_path):
    path, decoded = sensor_run(tmp_path, 7, "first")
    imu, compass, down = decoded["/imu"], decoded["/magnetic_field"], decoded["/range/down"]
    # 20 s at 200 Hz: the imu's last 4 readings are still on their way (20 ms of latency);
    # the compass measured 10 ms before each sample, so the first two samples (0 and 6 ms)
    # measured nothing yet; the range at 100 Hz.
    assert len(imu) == 3997 and len(compass) == 3999 and len(down) == 2001
    stamps = lambda ms: [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in ms]  # noqa: E731
    assert stamps(imu) == on_steps(200, 3997)
    assert stamps(compass) == [t - 10_000_000 for t in on_steps(200, 4001)[2:]]
    _, exact = sensor_run(tmp_path, 7, "exact", EXACT)
    # Each reading less the exact one is the noise drawn for it.
    def noise_of(topic, read):
        return [read(m) - read(e) for m, e in zip(decoded[topic], exact[topic], strict=True)]
    # The accelerometer: the model's white noise (0.05), per axis; the standard error of a
    # mean over 4001 draws is 0.05 / 63 = 0.0008, of a stddev about 0.0006.
    for axis in "xyz":
        mean, stddev = spread(noise_of("/imu", lambda m: getattr(m.linear_acceleration, axis)))
        assert abs(mean) < 0.004 and abs(stddev - 0.05) < 0.003, (axis, mean, stddev)
    # The gyro: a constant bias of +-0.2 (its sign drawn once) and white noise of 0.01.
    for axis in "xyz":
        mean, stddev = spread(noise_of("/imu", lambda m: getattr(m.angular_velocity, axis)))
        assert abs(abs(mean) - 0.2) < 0.004 and abs(stddev - 0.01) < 0.0006, (axis, mean, stddev)
    # Covariances carry the white noise's variance on their diagonals.
    first = imu[0]
    assert [first.angular_velocity_covariance[k] for k in (0, 4, 8)] == [1e-4] * 3
    assert abs(first.linear_acceleration_covariance[4] - 0.0025) < 1e-12
    assert first.orientation_covariance[0] == -1.0, "no orientation sensor"
    # The magnetometer drifts: its spread settles at 0.001 * sqrt(1/2), and one correlation
    # time apart (200 messages) its drift keeps about 1/e of itself.
    xs = noise_of("/magnetic_field", lambda m: m.magnetic_field.x)
    mean, stddev = spread(xs[1000:])
    assert 0.4e-3 < stddev < 1.0e-3, stddev
    centred = [x - mean for x in xs[1000:]]
    lag = 200
    correlation = sum(a * b for a, b in zip(centred, centred[lag:])) / (len(centred) - lag) / stddev**2
    assert 0.05 < correlation < 0.7, correlation
    # The rangefinder: 0.44 m above the floor, noisy by 0.02, read in steps of 0.01 (the
    # rounding adds 0.01 / sqrt(12) to the spread).
    assert all(abs(m.range - 0.44) < 1e-6 for m in exact["/range/down"])
    ranges = [m.range for m in down]
    mean, stddev = spread(ranges)
    assert abs(mean - 0.44) < 0.003 and abs(stddev - (0.02**2 + 0.01**2 / 12) ** 0.5) < 0.002, (mean, stddev)
    assert all(abs(r / 0.01 - round(r / 0.01)) < 1e-3 for r in ranges)
    assert [m.angular_velocity_covariance[0] for m in exact["/imu"][:1]] == [0.0], "exact: 0"
    # A rerun with the seed gives the same messages; another seed, other draws.
    again, _ = sensor_run(tmp_path, 7, "again")
    other, _ = sensor_run(tmp_path, 8, "other")
    assert_same(recorded(path), recorded(again), "same seed")
    assert recorded(other)["/imu"] != recorded(path)["/imu"], "another seed"
    swinging = recorded(path)["/joint_states"]
    assert len(swinging) > 1 and swinging[0][1] != swinging[-1][1], "the arm swings"
    assert recorded(other)["/joint_states"] == swinging, "the physics never sees the noise"


# A camera and a planar lidar at a mast before a wall 2.9 m ahead, with a pendulum swinging
# through their view: frames and scans change from one sample to the next.
SEEN_WORLD = """
world: {timestep: 0.002, floor: false, light: true}
sim: {seed: 5}
robots:
  - name: rig
    mjcf_string: |
      <mujoco><worldbody>
        <body name="mast" pos="0 0 1">
          <camera name="eye" fovy="60" xyaxes="0 -1 0 0 0 1"/>
        </body>
      </worldbody></mujoco>
    cameras:
      - {camera: eye, width: 96, height: 72, rate: 20}
    lidars:
      - {name: laser, body: mast, channels: 1, samples: 61, horizontal_fov: [-30, 30],
         range_min: 0.05, range_max: 10, rate: 20}
    noise: NOISE
  # Another robot: a lidar's rays pass through its own.
  - name: scene
    mjcf_string: |
      <mujoco><worldbody>
        <body name="pendulum" pos="1.5 0 1.8" euler="50 0 0">
          <joint name="swing" type="hinge" axis="1 0 0"/>
          <geom type="box" size="0.1 0.15 0.15" pos="0 0 -0.8" rgba="1 0 0 1"
                contype="0" conaffinity="0"/>
        </body>
        <body name="wall" pos="3 0 1">
          <geom type="box" size="0.1 3 3" rgba="0.4 0.6 0.4 1"/>
        </body>
      </worldbody></mujoco>
"""
SEEN_NOISE = "{eye: {stddev: 0.02}, eye/depth: {stddev: 0.01}, laser: {stddev: 0.01}}"
SEEN_TOPICS = ("/rig/eye/image_raw", "/rig/eye/depth/image_raw", "/rig/eye/camera_info",
               "/rig/laser/scan")


def seen_run(tmp_path, name, noise, *args):
    config = tmp_path / f"{name}.yaml"
    config.write_text(SEEN_WORLD.replace("NOISE", noise))
    path = tmp_path / f"{name}.mcap"
    run_bridge("--config", str(config), "--set", "zmq.enabled=false", "--duration", "1",
               "--mcap", str(path), *args)
    return path


def decoded_of(path, topic):
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [m for _, _, _, m in reader.iter_decoded_messages(topics=[topic], log_time_order=False)]


def test_camera_frames_and_lidar_scans_are_samples_of_the_sim_clock_with_their_noise(tmp_path):
    fast = recorded(seen_run(tmp_path, "fast", "{}", "--mode", "fast"))
    real_time = recorded(seen_run(tmp_path, "real_time", "{}", "--mode", "realtime"))
    for topic in SEEN_TOPICS:
        # 20 Hz for 1 s of sim time, and the start's: each rendered or cast from its sample.
        assert [t for t, _ in fast[topic]] == on_steps(20, 21), topic
    scans = decoded_of(tmp_path / "fast.mcap", "/rig/laser/scan")
    assert [m.header.stamp.nanosec for m in scans[:3]] == [0, 50_000_000, 100_000_000]
    assert len({tuple(m.ranges) for m in scans}) > 10, "the pendulum swings through the scans"
    images = [payload for _, payload in fast["/rig/eye/image_raw"]]
    assert len(set(images)) > 10, "and through the frames"
    assert_same(fast, real_time, "real time")
    print(f"{len(scans)} scans and {len(images)} frames, fast and real time byte for byte")

    noisy = seen_run(tmp_path, "noisy", SEEN_NOISE, "--mode", "fast")
    exact = tmp_path / "fast.mcap"
    # Each beam: the wall and the pendulum, noisy by 0.01 m (a standard error of 2 %).
    residuals = [a - b for n, e in zip(decoded_of(noisy, "/rig/laser/scan"), scans, strict=True)
                 for a, b in zip(n.ranges, e.ranges, strict=True) if math.isfinite(b)]
    mean, stddev = spread(residuals)
    assert len(residuals) > 1000 and abs(mean) < 0.002 and abs(stddev - 0.01) < 0.001, (mean, stddev)
    print(f"noise: beams {stddev:.4f} m over {len(residuals)}", end="")
    # Pixels: 0.02 of full scale (5.1 levels) on each colour value not clipped at 0 or 255,
    # rounded to a level (which adds 1/12 to the variance).
    residuals = [a - b for n, e in zip(decoded_of(noisy, "/rig/eye/image_raw"),
                                       decoded_of(exact, "/rig/eye/image_raw"), strict=True)
                 for a, b in zip(bytes(n.data), bytes(e.data)) if 20 < b < 235]
    mean, stddev = spread(residuals)
    expected = ((0.02 * 255) ** 2 + 1 / 12) ** 0.5
    assert len(residuals) > 100_000 and abs(mean) < 0.1 and abs(stddev - expected) < 0.1, (mean, stddev)
    print(f", pixels {stddev:.3f} levels (expected {expected:.3f})", end="")
    # Depth: 0.01 m where the camera sees something.
    depth = lambda m: array.array("f", bytes(m.data))  # noqa: E731
    residuals = [a - b for n, e in zip(decoded_of(noisy, "/rig/eye/depth/image_raw"),
                                       decoded_of(exact, "/rig/eye/depth/image_raw"), strict=True)
                 for a, b in zip(depth(n), depth(e)) if math.isfinite(b)]
    mean, stddev = spread(residuals)
    assert len(residuals) > 100_000 and abs(mean) < 0.001 and abs(stddev - 0.01) < 0.0005, (mean, stddev)
    print(f", depth {stddev:.5f} m")
    assert recorded(seen_run(tmp_path, "again", SEEN_NOISE, "--mode", "fast")) == recorded(noisy)
    # A range resolution of 5 cm: every hit read in its steps.
    stepped = seen_run(tmp_path, "stepped", "{}", "--mode", "fast",
                       "--set", "robots.0.lidars.0.resolution=0.05")
    hits = [r for m in decoded_of(stepped, "/rig/laser/scan") for r in m.ranges if math.isfinite(r)]
    assert len(hits) > 1000 and all(abs(r / 0.05 - round(r / 0.05)) < 1e-4 for r in hits)
