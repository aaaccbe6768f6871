"""A camera's lens: plumb-bob distortion on the image and in CameraInfo, read back from an
MCAP recording by the official readers. Fifteen small glowing balls hang on a grid before a
dark wall; each one's centre, projected through the camera's K (from its CameraInfo) and
then through the plumb-bob equations with the config's coefficients, must be where its blob
lies in the distorted image, and where the pinhole puts it in the image of the same camera
without a lens; and the point cloud of the distorted image puts each ball's pixels where
the ball is."""
import numpy as np

from test_mcap import by_topic, run_bridge

WIDTH, HEIGHT = 320, 240
LENS = {"k1": -0.2, "k2": 0.05, "k3": 0.0, "p1": 0.003, "p2": -0.002}
BALLS = [(3.0, y, 1.0 + z) for y in (-1.6, -0.8, 0.0, 0.8, 1.6) for z in (-0.9, 0.0, 0.9)]
MJCF = """<mujoco><asset><material name="glow" emission="1" rgba="1 1 1 1"/></asset>
<worldbody>
  <body name="mast" pos="0 0 1"><camera name="eye" fovy="60" xyaxes="0 -1 0 0 0 1"/></body>
  <geom name="wall" type="box" pos="3.3 0 1" size="0.1 4 4" rgba="0.05 0.05 0.05 1"/>
BALLS</worldbody></mujoco>"""
WORLD = """
robots:
  - name: rig
    mjcf_string: |
MODEL
    cameras:
      - {camera: eye, width: WIDTH, height: HEIGHT, rate: 10, depth: false, points: true LENS}
"""


def record(tmp_path, name, lens):
    balls = "".join(f'  <geom type="sphere" size="0.05" pos="{x} {y} {z}" material="glow"/>\n'
                    for x, y, z in BALLS)
    model = "\n".join("      " + line for line in MJCF.replace("BALLS", balls).splitlines())
    lens_text = ", distortion: {" + ", ".join(f"{k}: {v}" for k, v in LENS.items()) + "}"
    text = (WORLD.replace("MODEL", model).replace("WIDTH", str(WIDTH))
            .replace("HEIGHT", str(HEIGHT)).replace(" LENS", lens_text if lens else ""))
    config = tmp_path / f"{name}.yaml"
    config.write_text(text)
    path = tmp_path / f"{name}.mcap"
    run_bridge("--config", str(config), "--set", "zmq.enabled=false", "--mode", "fast",
               "--duration", "0.1", "--mcap", str(path))
    decoded = {topic: [m for _, _, m in found] for topic, found in by_topic(path).items()}
    image = decoded["/eye/image_raw"][-1]
    assert (image.encoding, image.width, image.height) == ("rgb8", WIDTH, HEIGHT)
    pixels = np.frombuffer(bytes(image.data), np.uint8).reshape(HEIGHT, WIDTH, 3)
    cloud = decoded["/eye/points"][-1]
    assert (cloud.width, cloud.height, cloud.point_step) == (WIDTH, HEIGHT, 16)
    points = np.frombuffer(bytes(cloud.data), np.float32).reshape(HEIGHT, WIDTH, 4)[..., :3]
    return pixels, decoded["/eye/camera_info"][-1], points


def pinhole(ball):
    """The ball's centre in normalized image coordinates of the optical frame (x right, y
    down, z along the view: the camera at (0, 0, 1) looking along +x)."""
    x, y, z = ball
    return -y / x, -(z - 1.0) / x


def plumb_bob(x, y):
    k1, k2, k3, p1, p2 = (LENS[k] for k in ("k1", "k2", "k3", "p1", "p2"))
    r2 = x * x + y * y
    radial = 1 + k1 * r2 + k2 * r2 ** 2 + k3 * r2 ** 3
    return (x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x),
            y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y)


def to_pixel(info, x, y):
    fx, cx, fy, cy = info.k[0], info.k[2], info.k[4], info.k[5]
    return fx * x + cx, fy * y + cy


def blob_centre(pixels, near):
    """The brightness-weighted centre of the bright pixels within 10 pixels of `near`."""
    u0, v0 = int(round(near[0])), int(round(near[1]))
    window = pixels[v0 - 10:v0 + 11, u0 - 10:u0 + 11, 0].astype(float)
    weight = np.where(window > 100, window, 0.0)
    assert weight.sum() > 0, f"no ball near {near}"
    rows, cols = np.mgrid[v0 - 10:v0 + 11, u0 - 10:u0 + 11]
    return (cols * weight).sum() / weight.sum(), (rows * weight).sum() / weight.sum()


def test_the_image_is_what_the_plumb_bob_lens_shows_and_camera_info_says_so(tmp_path):
    pinhole_pixels, pinhole_info, _ = record(tmp_path, "pinhole", lens=False)
    pixels, info, points = record(tmp_path, "lens", lens=True)
    assert list(pinhole_info.d) == [0.0] * 5
    assert info.distortion_model == "plumb_bob"
    assert list(info.d) == [LENS["k1"], LENS["k2"], LENS["p1"], LENS["p2"], LENS["k3"]]
    assert list(info.k) == list(pinhole_info.k), "K stays the pinhole's"
    worst_pinhole = worst_lens = worst_cloud = 0.0
    moved = []
    for ball in BALLS:
        x, y = pinhole(ball)
        straight = to_pixel(info, x, y)
        bent = to_pixel(info, *plumb_bob(x, y))
        seen_straight = blob_centre(pinhole_pixels, straight)
        seen_bent = blob_centre(pixels, bent)
        worst_pinhole = max(worst_pinhole, np.hypot(*np.subtract(seen_straight, straight)))
        worst_lens = max(worst_lens, np.hypot(*np.subtract(seen_bent, bent)))
        moved.append(np.hypot(*np.subtract(bent, straight)))
        # The cloud's points of the ball's pixels (the optical frame: x right, y down, z
        # ahead): on its surface, which a pixel's ray through the wrong place would miss.
        u0, v0 = int(round(bent[0])), int(round(bent[1]))
        window = (slice(v0 - 6, v0 + 7), slice(u0 - 6, u0 + 7))
        bright = pixels[window][..., 0] > 100
        seen = points[window][bright]
        centre = np.array([-ball[1], -(ball[2] - 1.0), ball[0]])
        # On the ball's surface, 0.05 m from its centre (but for the odd edge pixel whose
        # colour blends into the ball and whose depth is the wall's).
        on_surface = np.median(np.linalg.norm(seen - centre, axis=1))
        worst_cloud = max(worst_cloud, abs(on_surface - 0.05))
    # The lens moves the outer balls by several pixels; each blob is where the equations say.
    assert max(moved) > 5.0, moved
    assert worst_pinhole < 0.3, worst_pinhole
    assert worst_lens < 0.3, worst_lens
    assert worst_cloud < 0.005, f"the cloud's balls are off their surfaces by {worst_cloud:.3f} m"
    print(f"{len(BALLS)} balls: moved up to {max(moved):.1f} px by the lens; blobs within "
          f"{worst_lens:.3f} px of the plumb-bob equations ({worst_pinhole:.3f} px without a lens); "
          f"the cloud's points within {worst_cloud * 1000:.1f} mm of the balls' surfaces")
