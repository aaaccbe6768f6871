"""Topics sampled in sim time, read back by the official MCAP readers (`mcap`, with
`mcap-ros2-support` decoding each message from the file's schemas): a rate means per second
of sim time, every message is stamped with the sim time of the step it samples, and a run in
fast mode, sped up, in real time or stepped while paused records the same messages, byte for
byte."""
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
# The run's own figures go on the wall clock; camera frames are not yet sampled.
UNSAMPLED = ("/diagnostics", "image", "camera_info", "points")


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
        run_bridge(*GO1, *args, "--duration", "2", "--mcap", str(path))
        messages[name] = recorded(path)
    fast = messages["fast"]
    for topic, hz in RATES.items():
        # Rate times sim seconds, and the start's sample.
        assert len(fast[topic]) == hz * 2 + 1, topic
        # Each at the first step at or after its time (30 Hz: 0, 0.034, 0.068, 0.1, ...).
        times = [t for t, _ in fast[topic]]
        assert times == on_steps(hz, hz * 2 + 1), f"{topic}: on the grid"
    for topic in ("/joint_states", "/odom"):
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
