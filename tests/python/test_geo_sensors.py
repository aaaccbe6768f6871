"""GPS receivers, barometers and altimeters placed on the earth by the world's origin, read back from an
MCAP recording by the official readers (and over ROS 2 by rclpy: test_ros_sensors.py). The truth
is the body's pose on /tf of the same run: a free body falling under a slanted gravity, so
that it moves east, north and down; the fix is checked against an independent WGS84
conversion (iterated, where the bridge uses Bowring's closed form), the pressure against the
standard atmosphere."""
import math

import pytest

from test_mcap import by_topic, run_bridge
from test_sim_time import on_steps

ORIGIN = {"latitude": 47.3977, "longitude": 8.5456, "altitude": 488.0, "heading": 30.0}
GRAVITY = (1.0, 2.0, -3.0)
MOUNT = (0.1, 0.2, 0.05)
GEO_WORLD = """
world:
  timestep: 0.002
  gravity: [1.0, 2.0, -3.0]
  origin: {latitude: 47.3977, longitude: 8.5456, altitude: 488.0, heading: 30.0}
sim: {seed: 11}
ros:
  rates: {tf: 100}
robots:
  - name: drone
    mjcf_string: |
      <mujoco><worldbody>
        <body name="frame" pos="0 0 50">
          <freejoint/>
          <geom type="box" size="0.2 0.2 0.05" contype="0" conaffinity="0"/>
        </body>
      </worldbody></mujoco>
    gps: [{name: gps, body: frame, xyz: [0.1, 0.2, 0.05], rate: RATE}]
    barometers: [{name: baro, body: frame, xyz: [0.1, 0.2, 0.05], rate: RATE}]
    altimeters: [{name: altimeter, body: frame, xyz: [0.1, 0.2, 0.05], rate: RATE}]
    noise: NOISE
"""
NOISE = ("{gps/horizontal_position: {stddev: 0.5}, gps/vertical_position: {stddev: 0.8},"
         " gps/horizontal_velocity: {stddev: 0.05}, baro: {stddev: 2.0},"
         " altimeter/vertical_position: {stddev: 0.3}, altimeter/vertical_velocity: {stddev: 0.1}}")

A, B = 6378137.0, 6356752.314245
E2 = 1 - B * B / (A * A)


def geodetic(east, north, up):
    """Latitude, longitude (degrees) and height of a point east, north, up of the origin,
    by the textbook iteration rather than the bridge's closed form."""
    lat0, lon0 = math.radians(ORIGIN["latitude"]), math.radians(ORIGIN["longitude"])
    n0 = A / math.sqrt(1 - E2 * math.sin(lat0) ** 2)
    h0 = ORIGIN["altitude"]
    x0 = (n0 + h0) * math.cos(lat0) * math.cos(lon0)
    y0 = (n0 + h0) * math.cos(lat0) * math.sin(lon0)
    z0 = (n0 * (1 - E2) + h0) * math.sin(lat0)
    sl, cl, sp, cp = math.sin(lon0), math.cos(lon0), math.sin(lat0), math.cos(lat0)
    x = x0 - sl * east - sp * cl * north + cp * cl * up
    y = y0 + cl * east - sp * sl * north + cp * sl * up
    z = z0 + cp * north + sp * up
    p = math.hypot(x, y)
    lat = math.atan2(z, p * (1 - E2))
    for _ in range(20):
        n = A / math.sqrt(1 - E2 * math.sin(lat) ** 2)
        h = p / math.cos(lat) - n
        lat = math.atan2(z, p * (1 - E2 * n / (n + h)))
    return math.degrees(lat), math.degrees(math.atan2(y, x)), h


def to_enu(x, y, z):
    h = math.radians(ORIGIN["heading"])
    return x * math.cos(h) - y * math.sin(h), x * math.sin(h) + y * math.cos(h), z


def pressure(height):
    geopotential = 6356766.0 * height / (6356766.0 + height)
    return 101325.0 * ((288.15 - 0.0065 * geopotential) / 288.15) ** (9.80665 * 28.9644 / (8314.32 * 0.0065))


def geo_run(tmp_path, name, rate, noise, seconds):
    config = tmp_path / f"{name}.yaml"
    config.write_text(GEO_WORLD.replace("RATE", str(rate)).replace("NOISE", noise))
    path = tmp_path / f"{name}.mcap"
    run_bridge("--config", str(config), "--set", "zmq.enabled=false", "--mode", "fast",
               "--duration", str(seconds), "--mcap", str(path))
    return {topic: [(t, m) for t, _, m in found] for topic, found in by_topic(path).items()}


def site_positions(decoded):
    """{stamp: the site's world position} from the body's transforms on /tf."""
    positions = {}
    for stamp, m in decoded["/tf"]:
        for t in m.transforms:
            if t.child_frame_id.endswith("frame"):
                p, q = t.transform.translation, t.transform.rotation
                assert abs(q.w) > 1 - 1e-9, "the body does not turn"
                positions[stamp] = (p.x + MOUNT[0], p.y + MOUNT[1], p.z + MOUNT[2])
    return positions


def test_a_gps_fix_and_a_barometer_follow_the_body_on_the_earth(tmp_path):
    decoded = geo_run(tmp_path, "exact", 10, "{}", 2)
    fixes, velocities, pressures = decoded["/gps/fix"], decoded["/gps/vel"], decoded["/baro"]
    altitudes = decoded["/altimeter"]
    for topic in ("/gps/fix", "/gps/vel", "/baro", "/altimeter"):
        assert [t for t, _ in decoded[topic]] == on_steps(10, 21), topic
    truth = site_positions(decoded)
    worst = 0.0
    for (stamp, fix), (_, vel), (_, baro), (_, altimeter) in zip(fixes, velocities, pressures,
                                                                altitudes, strict=True):
        assert fix.header.frame_id == "gps" and fix.status.status == 0 and fix.status.service == 1
        assert fix.position_covariance_type == 0
        east, north, up = to_enu(*truth[stamp])
        lat, lon, alt = geodetic(east, north, up)
        metres = (abs(fix.latitude - lat) * 111_200, abs(fix.longitude - lon) * 75_300,
                  abs(fix.altitude - alt))
        worst = max(worst, *metres)
        # From rest under constant gravity: v = g t, turned into east, north, up, where t is
        # the time before the step's integration (MuJoCo measures in the step's forward pass,
        # as it does /tf's poses; the start's sample is the state at rest).
        t = max(stamp * 1e-9 - 0.002, 0.0)
        expected = to_enu(*(g * t for g in GRAVITY))
        v = vel.twist.twist.linear
        assert max(abs(v.x - expected[0]), abs(v.y - expected[1]), abs(v.z - expected[2])) < 1e-9
        assert abs(baro.fluid_pressure - pressure(ORIGIN["altitude"] + truth[stamp][2])) < 1e-6
        # The altimeter's reference is the site's height at the start: 50 m plus the mount.
        assert altimeter.vertical_reference == pytest.approx(50 + MOUNT[2], abs=1e-12)
        assert abs(altimeter.vertical_position - (truth[stamp][2] - 50 - MOUNT[2])) < 1e-9
        assert abs(altimeter.vertical_velocity - GRAVITY[2] * t) < 1e-9
        assert altimeter.header.frame_id == "altimeter"
    assert worst < 0.001, f"{worst} m"
    last = fixes[-1][1]
    print(f"{len(fixes)} fixes within {worst * 1000:.4f} mm of the body; the last at "
          f"{last.latitude:.7f} N {last.longitude:.7f} E {last.altitude:.3f} m; pressure "
          f"{pressures[0][1].fluid_pressure:.2f} -> {pressures[-1][1].fluid_pressure:.2f} Pa; "
          f"altimeter {altitudes[-1][1].vertical_position:.4f} m at "
          f"{altitudes[-1][1].vertical_velocity:.4f} m/s")
    # The fall moved it: 2 s of g t^2 / 2 is 2 m east of x, 4 m north of y, 6 m down.
    assert truth[max(truth)][2] < 50 - 5.9


def test_gps_and_barometer_noise_has_the_spread_the_config_gives(tmp_path):
    exact = geo_run(tmp_path, "exact", 100, "{}", 10)
    noisy = geo_run(tmp_path, "noisy", 100, NOISE, 10)

    def spread(values):
        mean = sum(values) / len(values)
        return mean, (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5

    pairs = list(zip(noisy["/gps/fix"], exact["/gps/fix"], strict=True))
    lat0 = math.radians(ORIGIN["latitude"])
    metres_per_degree = (math.pi / 180 * A * (1 - E2) / (1 - E2 * math.sin(lat0) ** 2) ** 1.5,
                         math.pi / 180 * A * math.cos(lat0) / math.sqrt(1 - E2 * math.sin(lat0) ** 2))
    north = [(n.latitude - e.latitude) * metres_per_degree[0] for (_, n), (_, e) in pairs]
    east = [(n.longitude - e.longitude) * metres_per_degree[1] for (_, n), (_, e) in pairs]
    up = [n.altitude - e.altitude for (_, n), (_, e) in pairs]
    # 1001 draws each: the standard error of a stddev is about 2.2 %.
    for values, stddev in ((north, 0.5), (east, 0.5), (up, 0.8)):
        mean, measured = spread(values)
        assert abs(mean) < 4 * stddev / 31 and abs(measured - stddev) < 0.08 * stddev, (mean, measured)
    fix = pairs[0][0][1]
    assert fix.position_covariance_type == 2
    assert [fix.position_covariance[k] for k in (0, 4, 8)] == pytest.approx([0.25, 0.25, 0.64])
    vel = noisy["/gps/vel"][0][1]
    assert [vel.twist.covariance[k] for k in (0, 7, 14)] == pytest.approx([0.0025, 0.0025, 0.0])
    baro = [n.fluid_pressure - e.fluid_pressure
            for (_, n), (_, e) in zip(noisy["/baro"], exact["/baro"], strict=True)]
    mean, measured = spread(baro)
    assert abs(measured - 2.0) < 0.16 and noisy["/baro"][0][1].variance == 4.0, (mean, measured)
    altimeter = {}
    for field, stddev in (("vertical_position", 0.3), ("vertical_velocity", 0.1)):
        errors = [getattr(n, field) - getattr(e, field) for (_, n), (_, e)
                  in zip(noisy["/altimeter"], exact["/altimeter"], strict=True)]
        altimeter[field] = spread(errors)[1]
        assert abs(altimeter[field] - stddev) < 0.08 * stddev, (field, altimeter[field])
    print(f"noise: north {spread(north)[1]:.3f} m, east {spread(east)[1]:.3f} m, up "
          f"{spread(up)[1]:.3f} m, pressure {measured:.3f} Pa, altimeter "
          f"{altimeter['vertical_position']:.3f} m and {altimeter['vertical_velocity']:.3f} m/s")
