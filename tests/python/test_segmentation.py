"""Segmentation cameras: the semantic and instance maps, their label maps and the boxes,
read back from an MCAP recording by the official readers, against MuJoCo's own segmentation
rendering (its Python Renderer) of the same scene from the same camera: each pixel's geom
there gives the class and the instance expected here, and each labelled body's pixels the
box. A crate and a ball with a cap stand before the camera; the crate's class comes from the
config, the ball's from its MJCF user data (label 1: the crate's class, which has no id of
its own, goes round it), the cap's from the config by geom name."""
import mujoco
import numpy as np

from test_mcap import by_topic, run_bridge

WIDTH, HEIGHT = 160, 120
MJCF = """<mujoco><worldbody>
  <light pos="0 0 4" dir="0 0 -1"/>
  <geom name="ground" type="plane" size="5 5 0.1"/>
  <body name="mast" pos="0 0 0.6">
    <camera name="eye" fovy="50" xyaxes="0 -1 0 0 0 1"/>
  </body>
  <body name="crate" pos="2 0.5 0.25">
    <geom name="crate_box" type="box" size="0.25 0.25 0.25" rgba="0.6 0.4 0.2 1"/>
  </body>
  <body name="ball" pos="2.2 -0.5 0.3">
    <geom name="ball_sphere" type="sphere" size="0.3" user="1" rgba="0.2 0.3 0.9 1"/>
    <geom name="ball_cap" type="box" pos="0 0 0.35" size="0.06 0.06 0.06"/>
  </body>
</worldbody></mujoco>"""
WORLD = """
world:
  classes:
    - {name: crate, bodies: [crate]}
    - {name: cap, id: 20, geoms: [ball_cap]}
robots:
  - name: rig
    mjcf_string: |
MODEL
    cameras:
      - {camera: eye, width: WIDTH, height: HEIGHT, rate: 10, segmentation: true}
"""
CLASS_OF_GEOM = {"crate_box": 2, "ball_sphere": 1, "ball_cap": 20}
BODY_OF_GEOM = {"crate_box": "crate", "ball_sphere": "ball", "ball_cap": "ball", "ground": None}


def record(tmp_path):
    config = tmp_path / "segmentation.yaml"
    model = "\n".join("      " + line for line in MJCF.splitlines())
    text = WORLD.replace("MODEL", model).replace("WIDTH", str(WIDTH)).replace("HEIGHT", str(HEIGHT))
    config.write_text(text)
    path = tmp_path / "segmentation.mcap"
    run_bridge("--config", str(config), "--set", "zmq.enabled=false", "--mode", "fast",
               "--duration", "0.2", "--mcap", str(path))
    return {topic: [(s, m) for _, s, m in found] for topic, found in by_topic(path).items()}


def mujoco_geoms():
    """The geom name each pixel sees in MuJoCo's segmentation rendering (None: nothing)."""
    model = mujoco.MjModel.from_xml_string(MJCF)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, HEIGHT, WIDTH) as renderer:
        renderer.enable_segmentation_rendering()
        renderer.update_scene(data, camera="eye")
        seen = renderer.render()
    names = np.full((HEIGHT, WIDTH), None, dtype=object)
    for v in range(HEIGHT):
        for u in range(WIDTH):
            objid, objtype = seen[v, u]
            if objtype == mujoco.mjtObj.mjOBJ_GEOM:
                names[v, u] = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, objid)
    return names


def image(message):
    assert (message.encoding, message.width, message.height) == ("rgb8", WIDTH, HEIGHT)
    return np.frombuffer(bytes(message.data), np.uint8).reshape(HEIGHT, WIDTH, 3)


def test_maps_labels_and_boxes_match_mujocos_segmentation_of_the_scene(tmp_path):
    decoded = record(tmp_path)
    geoms = mujoco_geoms()
    stem = "/eye"
    for topic, schema in [("semantic/labels_map", "sensor_msgs/msg/Image"),
                          ("instance/labels_map", "sensor_msgs/msg/Image"),
                          ("semantic/colored_map", "sensor_msgs/msg/Image"),
                          ("instance/colored_map", "sensor_msgs/msg/Image"),
                          ("semantic/label_info", "vision_msgs/msg/LabelInfo"),
                          ("instance/label_info", "vision_msgs/msg/LabelInfo"),
                          ("detections", "vision_msgs/msg/Detection2DArray")]:
        got = decoded[f"{stem}/{topic}"]
        # 10 Hz for 0.2 s of sim time, and the start's frame.
        assert len(got) == 3 and {s for s, _ in got} == {schema}, (topic, len(got))
    classes = {c.class_id: c.class_name for c in decoded[f"{stem}/semantic/label_info"][0][1].class_map}
    assert classes == {0: "background", 1: "class_1", 2: "crate", 20: "cap"}
    instances = {c.class_id: c.class_name for c in decoded[f"{stem}/instance/label_info"][0][1].class_map}
    assert {"rig::crate", "rig::ball"} <= set(instances.values()), instances
    semantic = image(decoded[f"{stem}/semantic/labels_map"][-1][1])
    instance = image(decoded[f"{stem}/instance/labels_map"][-1][1])
    assert semantic[..., 0].tolist() == semantic[..., 1].tolist() == semantic[..., 2].tolist()
    instance_id = instance[..., 0].astype(int) + 256 * instance[..., 1].astype(int)

    expected_class = np.vectorize(lambda g: CLASS_OF_GEOM.get(g, 0))(geoms)
    expected_body = np.vectorize(lambda g: BODY_OF_GEOM.get(g))(geoms)
    got_body = np.vectorize(lambda i: instances.get(i, "").removeprefix("rig::") or None)(instance_id)
    pixels = WIDTH * HEIGHT
    class_agree = np.mean(semantic[..., 0] == expected_class)
    body_agree = np.mean((got_body == expected_body) | (expected_body == None))  # noqa: E711
    seen = {c: int(np.sum(expected_class == c)) for c in (1, 2, 20)}
    assert all(n > 50 for n in seen.values()), seen
    assert class_agree == 1.0, f"classes agree on {class_agree:.4%} of {pixels} pixels"
    assert body_agree == 1.0, f"instances agree on {body_agree:.4%} of {pixels} pixels"
    assert np.array_equal(instance[..., 2], semantic[..., 0]), "the instance map's class channel"
    ground = geoms == "ground"
    assert ground.any() and {instances[i] for i in np.unique(instance_id[ground])} == {
        "rig::world::ground"}, "the ground is an instance of its own, unlabelled"
    assert np.all(semantic[..., 0][ground] == 0)

    # The boxes: around each labelled body's pixels, its class (by number, as Gazebo's) its
    # first labelled geom's.
    boxes = {d.id: d for d in decoded[f"{stem}/detections"][-1][1].detections}
    assert set(boxes) == {"rig::crate", "rig::ball"}
    for body, class_id in (("crate", "2"), ("ball", "1")):
        rows, cols = np.nonzero(expected_body == body)
        box = boxes[f"rig::{body}"]
        assert box.results[0].hypothesis.class_id == class_id
        assert box.results[0].hypothesis.score == 1.0
        assert (box.bbox.center.position.x, box.bbox.center.position.y) == (
            (cols.min() + cols.max()) / 2, (rows.min() + rows.max()) / 2), body
        assert (box.bbox.size_x, box.bbox.size_y) == (
            cols.max() - cols.min() + 1, rows.max() - rows.min() + 1), body
    colored = image(decoded[f"{stem}/semantic/colored_map"][-1][1])
    assert np.all(colored[expected_class == 0] == 0) and np.all(colored[expected_class == 2].any(axis=-1))
    print(f"{pixels} pixels: classes and instances as MuJoCo's segmentation; "
          f"boxes {[(b.id, b.bbox.size_x, b.bbox.size_y) for b in boxes.values()]}")
