"""The Python reference of benches/render.rs (started by it; not run alone): MuJoCo's own
Python bindings on the same compiled model (MJB).

  MODEL camera CAMERA_ID QUALITY SECOND SECONDS
      mujoco.Renderer at 640x480 on camera CAMERA_ID, `fast` (no shadows, reflections or
      multisampling) or `full`; SECOND `true` renders a depth pass after each RGB pass, as the
      Renderer reads depth, `segmentation` a segmentation pass (with the Renderer's map from
      colours to geoms), `false` none. Prints frames per second.
  MODEL lidar CHANNELS SAMPLES SECONDS X,Y,Z,QW,QX,QY,QZ QPOS OWN_GEOMS
      in the state QPOS, with the geoms OWN_GEOMS made invisible (the bridge's caster leaves
      the lidar's own robot out so), per scan mujoco.mj_kinematics, then mujoco.mj_multiRay
      over CHANNELS x SAMPLES rays (elevation -15..15 degrees, a full turn) from the lidar
      pose given, back to back. Prints rays per second.
"""
import os
import sys
import time

import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")
import mujoco  # noqa: E402


def camera(model, camera_id, quality, second, seconds):
    """Frames per second after a first frame (which compiles the GL driver's shaders)."""
    if quality == "fast":
        model.vis.quality.offsamples = 0
    renderer = mujoco.Renderer(model, 480, 640)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    if quality == "fast":
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
    frames, start = -1, time.perf_counter()
    while time.perf_counter() - start < seconds:
        if frames == 0:
            start = time.perf_counter()
        renderer.update_scene(data, camera=camera_id)
        if quality == "fast":
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        renderer.render()
        if second == "true":
            renderer.enable_depth_rendering()
            renderer.render()
            renderer.disable_depth_rendering()
        elif second == "segmentation":
            renderer.enable_segmentation_rendering()
            renderer.render()
            renderer.disable_segmentation_rendering()
        frames += 1
    return frames / (time.perf_counter() - start)


def lidar(model, channels, samples, seconds, pose, qpos, own):
    for geom in own:
        model.geom_matid[geom] = -1
        model.geom_rgba[geom, 3] = 0
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    x, y, z, qw, qx, qy, qz = pose
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, np.array([qw, qx, qy, qz]))
    elevation = np.radians(np.linspace(-15, 15, channels))[:, None]
    azimuth = np.radians(np.linspace(-180, 180, samples, endpoint=False))[None, :]
    rays = np.stack([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth),
                     np.sin(elevation) * np.ones_like(azimuth)], axis=-1).reshape(-1, 3)
    rays = np.ascontiguousarray(rays @ rotation.reshape(3, 3).T)
    count = len(rays)
    origin = np.array([x, y, z])
    geoms = np.zeros(count, dtype=np.int32)
    distances = np.zeros(count)
    scans, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        mujoco.mj_kinematics(model, data)
        mujoco.mj_multiRay(model, data, origin, rays.ravel(), None, 1, -1, geoms, distances,
                           None, count, 30.0)
        scans += 1
    return scans * count / (time.perf_counter() - start)


def main():
    model = mujoco.MjModel.from_binary_path(sys.argv[1])
    if sys.argv[2] == "camera":
        rate = camera(model, int(sys.argv[3]), sys.argv[4], sys.argv[5], float(sys.argv[6]))
    else:
        rate = lidar(model, int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
                     [float(v) for v in sys.argv[6].split(",")],
                     [float(v) for v in sys.argv[7].split(",")],
                     [int(v) for v in sys.argv[8].split(",") if v])
    print(f"{rate:.3f}")


if __name__ == "__main__":
    main()
